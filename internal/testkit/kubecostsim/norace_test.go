//go:build !race

package kubecostsim

const raceEnabled = false
