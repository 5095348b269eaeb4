package traces

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestRealLogs reads the full production logs when a user has put them in
// the shared folder (shared/traces/philly/cluster_job_log,
// shared/traces/{saturn,venus}/cluster_log.csv), selects the paper's window
// and compares the whole-trace profile with the README table. The logs are
// large downloads that are not part of the project, so each case skips with
// a message when its file is absent.
func TestRealLogs(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("shared data folder not found (set AEGIS_SHARED)")
	}
	for _, tc := range []struct {
		name, path string
		format     Format
	}{
		{"philly", "traces/philly/cluster_job_log", FormatPhilly},
		{"saturn", "traces/saturn/cluster_log.csv", FormatHelios},
		{"venus", "traces/venus/cluster_log.csv", FormatHelios},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(shared, tc.path)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is absent (the full %s log is a separate download, see shared/traces/SOURCES.md)", path, tc.name)
			}
			l, err := ReadLogFile(path, tc.format, models.A100())
			require.NoError(t, err)
			t.Logf("%s: %d records, %d kept, skipped: %s", tc.name, l.Records, len(l.Jobs), l.SkipSummary())
			sel, err := SelectWindow(l, DefaultSelectOptions(tc.name))
			require.NoError(t, err)
			ref, _ := ReferenceProfile(tc.name)
			rep := sel.Report
			// The paper's manifests may have filtered the source further (a
			// date range, VCs), so report rather than require equality.
			t.Logf("%s: eligible %d (paper %d), window %d-%d (paper %d-%d), score %.4f",
				tc.name, rep.EligibleJobs, ref.JobCount, rep.Start, rep.End, ref.WindowStart, ref.WindowEnd, rep.Score)
			d := Distance(rep.Whole, ref.Profile)
			t.Logf("%s: whole-trace distance to the paper's profile: %+v", tc.name, d)
		})
	}
}
