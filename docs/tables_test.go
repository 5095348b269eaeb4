package docs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/traces"
)

// seed is the seed of every documented run: the CLI's default.
const seed = 1

// config is one policy configuration of the documented tables.
type config struct {
	policy string
	sets   []string // key=value
}

func (c config) String() string {
	if len(c.sets) == 0 {
		return c.policy
	}
	return c.policy + " " + strings.Join(c.sets, " ")
}

// runs memoizes simulations on 3 × A100-40GB, so that tables sharing a run
// compute it once.
type runs struct {
	mu  sync.Mutex
	out map[string]*results.Summary
}

func (r *runs) get(t *testing.T, trace string, c config) results.Summary {
	t.Helper()
	key := trace + "|" + c.String()
	r.mu.Lock()
	s, ok := r.out[key]
	r.mu.Unlock()
	if ok {
		return *s
	}
	tr, err := traces.Load(trace)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	params := map[string]string{}
	for _, kv := range c.sets {
		k, v, _ := strings.Cut(kv, "=")
		params[k] = v
	}
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: c.policy, Params: params, Seed: seed}, nil)
	require.NoError(t, err)
	r.mu.Lock()
	r.out[key] = &o.Summary
	r.mu.Unlock()
	return o.Summary
}

// prefetch computes the runs of every (trace, config) in parallel.
func (r *runs) prefetch(t *testing.T, tracesList []string, cs []config) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, tr := range tracesList {
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				r.get(t, tr, c)
			}()
		}
	}
	wg.Wait()
}

var (
	exclusive = config{policy: "exclusive"}
	aegis     = config{policy: "aegis"}
	horus     = config{policy: "horus"}
	lucid     = config{policy: "lucid"}
	builtins  = []string{"philly", "saturn", "venus"}
)

// row formats a summary's main metrics (seconds rounded to whole ones).
func row(s results.Summary) string {
	return fmt.Sprintf("%.0f | %.0f | %.0f | %.0f | %d/%d", s.MakespanS, s.MeanJCTS, s.P95JCTS, s.MeanExecS,
		s.FailedAttempts, s.RecoveredAttempts)
}

// paperTable is a table of make reproduce's committed results (see
// experiments.TestPaperResultsCurrent), without its heading.
func paperTable(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("..", "results", "paper", name, "table.md"))
	require.NoError(t, err)
	_, body, _ := strings.Cut(string(b), "\n\n")
	return body + "\nMade by `make reproduce` (`aegis run experiments/" + name + ".yaml --out results/paper/" + name + "`).\n"
}

// generators produce each named block's content.
func generators(r *runs) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		// README: the paper's Table 2 from results/paper.
		"readme-paper-table2": func(t *testing.T) string { return paperTable(t, "table2") },
		// docs/legacy.md: Table 6 on the legacy server's traces.
		"legacy-table6": func(t *testing.T) string { return paperTable(t, "table6") },
		// README: the four policies on the paper's three traces.
		"readme-policies": func(t *testing.T) string {
			cs := []config{exclusive, aegis, horus, lucid}
			return policyTable(t, r, cs, "aegis simulate --trace TRACE --policy POLICY --server a100-40gb:3 --seed 1")
		},
		// docs/policies.md: AEGIS's memory inputs, placements and filter.
		"policies-aegis": func(t *testing.T) string {
			cs := []config{exclusive, aegis, {policy: "aegis", sets: []string{"memory=peakmem"}},
				{policy: "aegis", sets: []string{"placement=rr"}}, {policy: "aegis", sets: []string{"filter=nf"}}}
			return policyTable(t, r, cs, "aegis simulate --trace TRACE --policy POLICY [--set KEY=VALUE] --server a100-40gb:3 --seed 1")
		},
		// docs/policies.md: the baselines and their variants, with the
		// execution-time inflation over Exclusive.
		"policies-baselines": func(t *testing.T) string {
			cs := []config{exclusive, aegis, horus, {policy: "horus", sets: []string{"variant=original"}},
				lucid, {policy: "lucid", sets: []string{"variant=original"}}}
			all := append([]string{"demo"}, builtins...)
			r.prefetch(t, all, cs)
			var b strings.Builder
			b.WriteString("| trace | policy | makespan s | mean JCT s | p95 JCT s | mean exec s | failed/recovered | exec inflation |\n|---|---|---|---|---|---|---|---|\n")
			for _, tr := range all {
				base := r.get(t, tr, exclusive).MeanExecS
				for _, c := range cs {
					s := r.get(t, tr, c)
					fmt.Fprintf(&b, "| %s | %s | %s | %.3f |\n", tr, c, row(s), s.MeanExecS/base)
				}
			}
			b.WriteString("\nEach row: `aegis simulate --trace TRACE --policy POLICY [--set variant=original] --server a100-40gb:3 --seed 1`;\n" +
				"exec inflation = mean exec / Exclusive's mean exec on the same trace; regenerated by `make docs-tables`.\n")
			return b.String()
		},
	}
}

var blockRE = regexp.MustCompile(`(?s)<!-- begin:([a-z0-9-]+) -->\n(.*?)<!-- end:([a-z0-9-]+) -->`)

// pages are the Markdown files that may hold generated blocks.
func pages(t *testing.T) []string {
	ps, err := filepath.Glob("*.md")
	require.NoError(t, err)
	return append([]string{"../README.md"}, ps...)
}

// TestDocsTables regenerates every marked block and compares it with the
// page (or, with -update, rewrites the page). Every generator must be used
// by some page, and every block must have a generator.
func TestDocsTables(t *testing.T) {
	r := &runs{out: map[string]*results.Summary{}}
	gens := generators(r)
	used := map[string]bool{}
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		text := string(b)
		var failures []string
		out := blockRE.ReplaceAllStringFunc(text, func(m string) string {
			g := blockRE.FindStringSubmatch(m)
			name, body, end := g[1], g[2], g[3]
			require.Equal(t, name, end, "%s: block %s ends with end:%s", page, name, end)
			gen, ok := gens[name]
			require.True(t, ok, "%s: no generator for block %q", page, name)
			used[name] = true
			want := gen(t)
			if body != want {
				failures = append(failures, name)
			}
			return "<!-- begin:" + name + " -->\n" + want + "<!-- end:" + name + " -->"
		})
		if golden.Update() {
			if out != text {
				require.NoError(t, os.WriteFile(page, []byte(out), 0o644))
			}
			continue
		}
		sort.Strings(failures)
		require.Empty(t, failures, "%s: blocks out of date (run make docs-tables)", page)
	}
	for name := range gens {
		require.True(t, used[name], "generator %q is used by no page", name)
	}
}

// figure is the README's figure: one run's timeline, drawn by aegis plot.
const figure = "img/philly-aegis-timeline.svg"

// TestDocsFigure redraws the README's figure (aegis simulate --trace philly
// --policy aegis --seed 1 --telemetry --out philly-aegis && aegis plot
// philly-aegis) and
// compares it with the committed file, or rewrites it with -update.
func TestDocsFigure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "philly-aegis")
	require.NoError(t, os.Mkdir(dir, 0o755))
	tr, err := traces.Load("philly")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	ev, err := os.Create(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	tel, err := os.Create(filepath.Join(dir, "telemetry.csv"))
	require.NoError(t, err)
	_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Seed: seed, Telemetry: tel}, ev)
	require.NoError(t, err)
	require.NoError(t, ev.Close())
	require.NoError(t, tel.Close())
	paths, err := plots.DrawDir(dir, "svg", plots.FigTimeline)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	got, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	golden.File(t, figure, got)
}

var linkRE = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestDocsLinks keeps the README a front page (at most 250 lines) and every
// relative link of README.md and docs/*.md pointing at a file that exists.
func TestDocsLinks(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	require.LessOrEqual(t, strings.Count(string(readme), "\n"), 250, "README.md is a front page: move reference material to docs/")
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(page), target))
			require.NoError(t, err, "%s links to %s, which does not exist", page, target)
		}
	}
}

// policyTable is the table of the configurations cs on the built-in paper
// traces, one row per trace and configuration, with the command that makes
// each row.
func policyTable(t *testing.T, r *runs, cs []config, cmd string) string {
	r.prefetch(t, builtins, cs)
	var b strings.Builder
	b.WriteString("| trace | policy | makespan s | mean JCT s | p95 JCT s | mean exec s | failed/recovered |\n|---|---|---|---|---|---|---|\n")
	for _, tr := range builtins {
		for _, c := range cs {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", tr, c, row(r.get(t, tr, c)))
		}
	}
	b.WriteString("\nEach row: `" + cmd + "`;\n" +
		"the table is regenerated by `make docs-tables`.\n")
	return b.String()
}
