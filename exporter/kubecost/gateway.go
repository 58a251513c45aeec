package kubecost

// A proxy in front of Kubecost has a time limit of its own. Kubecost
// 3.x's frontend (chart kubecost/kubecost v3.0.0 to v3.2.1,
// templates/frontend/frontend-configmap.yaml, `location /model/`) proxies
// the API to the aggregator with proxy_read_timeout set to
// frontend.timeoutSeconds, 300 s by default (values.yaml), and answers a
// slower aggregator with 504 (its custom_504.html page); an aggregator
// that drops the connection (OOM-killed) is answered with 502. Neither
// says the day is wrong: the window was too big to compute in time. So an
// hourly window the proxy cut is split at once, as the run loop does for
// a window that keeps failing on a slow server, instead of being asked
// again whole, which would wait out the proxy's limit once more per retry
// (KUBECOST_MAX_RETRIES × 300 s) before splitting anyway.

// gatewayHint is added to the error of a daily window a proxy kept
// cutting: a daily query cannot be split, so the user must either make
// the query cheaper or give the proxy more time.
func gatewayHint(err *attemptError) string {
	if !err.gateway {
		return ""
	}
	return "; a 502 or 504 is a proxy's answer: Kubecost 3.x's frontend cuts answers slower than its frontend.timeoutSeconds " +
		"(300 s by default) with a 504, so raise that Helm value of Kubecost's chart, or query the aggregator's " +
		"port 9004 directly (KUBECOST_API_ENDPOINT=http://<release>-aggregator.<namespace>:9004 with KUBECOST_API_FLAVOR=cost-model)"
}
