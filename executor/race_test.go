//go:build race

package executor_test

// raceEnabled: the race detector slows every process the tests start.
const raceEnabled = true
