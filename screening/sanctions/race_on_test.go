//go:build race

package sanctions

const raceEnabled = true
