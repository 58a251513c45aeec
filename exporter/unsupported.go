package exporter

import "errors"

// ErrServerUnsupported marks a failed day whose cause every other day of
// the run would meet again: the server cannot answer a query the run
// needs (an OpenCost that ignores the cluster filter of a federated
// export, say). The run stops exporting rather than fail each day the
// same way, and says what to change instead of promising that the next
// run retries: the next run fails the same until the server or the
// setting changes.
var ErrServerUnsupported = errors.New("the server cannot answer the queries this run needs")
