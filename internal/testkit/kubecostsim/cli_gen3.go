package kubecostsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
)

// serveGen3 serves sim as a Kubecost 3.x: the aggregator on a free port
// of 127.0.0.1, and the frontend on -listen (the URL the exporter is
// given), until ctx ends.
func serveGen3(ctx context.Context, sim *Sim, fl *cliFlags, stdout io.Writer, log *slog.Logger) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Error("listen (aggregator)", "err", err)
		return 2
	}
	agg := &http.Server{Handler: NewGen3Aggregator(sim, fl.gen3cfg), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := agg.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve (aggregator)", "err", err)
		}
	}()
	defer agg.Close()
	up := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	return listenAndServe(ctx, NewGen3Frontend(up, fl.gen3cfg), fl, stdout, log, func() {
		fmt.Fprintf(stdout, "AGGREGATOR=%s\n", up)
		c := sim.Config()
		log.Info("kubecost 3.x simulator", "cluster", c.ClusterName, "seed", c.Seed, "aggregator", up.String(),
			"frontend_timeout", fl.gen3cfg.Timeout, "require_header", fl.gen3cfg.RequireHeader != "",
			"now", c.Now().UTC().Format(time.RFC3339))
	})
}
