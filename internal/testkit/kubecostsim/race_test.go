//go:build race

package kubecostsim

// raceEnabled: the race detector slows generation about tenfold, so the
// biggest tests shrink.
const raceEnabled = true
