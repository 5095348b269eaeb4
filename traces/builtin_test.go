package traces

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestPaperTraces checks the three embedded paper traces: loadable by name,
// 60 runnable jobs each (catalog workloads of the right GPU count), job ids
// equal to the index column, and docs/traces.md's arrival spans and 2-GPU
// minimums.
func TestPaperTraces(t *testing.T) {
	cat := models.A100()
	for name, b := range map[string][]byte{"philly": phillyCSV, "saturn": saturnCSV, "venus": venusCSV} {
		t.Run(name, func(t *testing.T) {
			tr, err := Load(name)
			require.NoError(t, err)
			require.Equal(t, name, tr.Name)
			require.Len(t, tr.Jobs, 60)
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"index", "workload_id", "num_gpus", "submit_offset_s", "submit_confidence"}, rows[0])
			n2 := 0
			for i, j := range tr.Jobs {
				row := rows[i+1]
				require.Equal(t, row[0], j.ID, "job ids are the index")
				require.Equal(t, strconv.Itoa(i), j.ID)
				require.Equal(t, row[1], j.Workload)
				w, ok := cat.Get(j.Workload)
				require.True(t, ok, j.Workload)
				require.Equal(t, w.GPUs, j.GPUs)
				if j.GPUs == 2 {
					n2++
				}
			}
			ref, ok := ReferenceProfile(name)
			require.True(t, ok)
			require.Equal(t, float64(ref.ArrivalSpanS), tr.Jobs[59].Submit.Seconds())
			require.GreaterOrEqual(t, n2, ref.MinTwoGPU)
		})
	}
	require.Equal(t, "demo, philly, saturn, venus, legacy-philly, legacy-saturn, legacy-venus", BuiltinNames())
	_, err := Load("nonesuch")
	require.ErrorContains(t, err, `trace "nonesuch" is neither a built-in (demo, philly, saturn, venus, legacy-philly, legacy-saturn, legacy-venus) nor a readable file`)
}

// TestPaperTracesAreUnchangedCopies checks the embedded files against the
// shared originals, byte for byte.
func TestPaperTracesAreUnchangedCopies(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the embedded paper traces are not compared with their source")
	}
	for name, b := range map[string][]byte{"philly": phillyCSV, "saturn": saturnCSV, "venus": venusCSV} {
		src, err := os.ReadFile(filepath.Join(shared, "traces", "aegis-representative", name+"_60jobs.csv"))
		if err != nil {
			t.Skipf("source of the %s paper trace not found: %v", name, err)
		}
		require.Equal(t, string(src), string(b), name)
	}
}

// TestLegacyTraces checks the three legacy-server traces: 60 one-GPU jobs
// of the legacy catalog each, ids the index, the measured arrival spans
// (Philly 10593 s, Saturn 2750 s, Venus 17935 s with its shortened gap) and
// Venus's one 600-s gap where the replay shortened 5.9 h.
func TestLegacyTraces(t *testing.T) {
	cat := models.Legacy11GB()
	for _, tc := range []struct {
		name   string
		span   float64
		source string
		gaps   int // inter-arrival gaps of exactly 600 s
	}{
		{"legacy-philly", 10593, "replay", 6},
		{"legacy-saturn", 2750, "trace", 0},
		{"legacy-venus", 17935, "replay", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Load(tc.name)
			require.NoError(t, err)
			require.Len(t, tr.Jobs, 60)
			rows, err := csv.NewReader(bytes.NewReader(builtins()[tc.name])).ReadAll()
			require.NoError(t, err)
			require.Equal(t, []string{"index", "workload_id", "num_gpus", "submit_offset_s", "source"}, rows[0])
			gaps := 0
			for i, j := range tr.Jobs {
				require.Equal(t, strconv.Itoa(i), j.ID)
				require.Equal(t, tc.source, rows[i+1][4])
				w, ok := cat.Get(j.Workload)
				require.True(t, ok, j.Workload)
				require.Equal(t, 1, w.GPUs)
				if i > 0 && j.Submit-tr.Jobs[i-1].Submit == 600*time.Second {
					gaps++
				}
			}
			require.Equal(t, tc.span, tr.Jobs[59].Submit.Seconds())
			require.Equal(t, tc.gaps, gaps)
		})
	}
}
