package policies

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gappy serves fixed samples whatever is asked.
type gappy []Sample

func (s gappy) Samples(dst []Sample, _, _ int) []Sample { return append(dst, s...) }

// The anchored window is placed by the samples' timestamps: a missed sample
// (a gap) must not shift the anchor onto an older sample.
func TestWindowAnchorByTimestamp(t *testing.T) {
	at := func(secs ...int) gappy {
		var s gappy
		for _, k := range secs {
			s = append(s, Sample{At: time.Duration(k) * time.Second, UtilPct: float64(k)})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		samples gappy
		want    []float64
	}{
		{"every second", at(6, 7, 8, 9, 10), []float64{8, 9, 10}},
		{"second 9 missed", at(6, 7, 8, 10), []float64{8, 10}},
		{"seconds 8 and 9 missed", at(5, 6, 7, 10), []float64{10}},
		{"a late sample", at(6, 7, 9, 10), []float64{9, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &View{Now: 10*time.Second + 300*time.Millisecond, Telemetry: tc.samples,
				GPUs: []GPU{{Jobs: []JobID{0}}},
				Jobs: []Job{{State: Running, On: []int{0}, Active: true, ActiveAt: 7500 * time.Millisecond}}}
			var got []float64
			for _, x := range Window(v, 0, 30, true, nil) {
				got = append(got, x.UtilPct)
			}
			require.Equal(t, tc.want, got)
		})
	}
}
