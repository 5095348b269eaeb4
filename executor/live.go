package executor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/traces"
)

// ReadLive reads job lines from r as they come (`aegis exec --trace -`):
// a header naming at least submit_offset_s, workload_id and num_gpus
// (job_id and solo_s optional, other columns ignored), then one job per
// line, comma-separated without quoting. Each job is sent on the returned
// channel, which is closed at the end of input. A bad line is reported on
// log with its line number and column, and skipped: the queue stays live.
func ReadLive(r io.Reader, name string, log io.Writer) <-chan traces.Job {
	ch := make(chan traces.Job)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		var p *liveParser
		line := 0
		for sc.Scan() {
			line++
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			if p == nil {
				var err error
				if p, err = newLiveParser(text); err != nil {
					fmt.Fprintf(log, "%s:%d: %v; no jobs read\n", name, line, err)
					for sc.Scan() {
					}
					return
				}
				continue
			}
			sp, err := p.parse(text, line)
			if err != nil {
				fmt.Fprintf(log, "%s:%d: %v; line skipped\n", name, line, err)
				continue
			}
			ch <- sp
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintf(log, "%s: %v\n", name, err)
		}
	}()
	return ch
}

// LiveHeader reads r up to its header line (blank and '#' lines before it
// skipped) and checks it as ReadLive would, so that input without a valid
// header is an error before a run starts, not a run of no jobs. The
// returned reader gives the header line and the rest of r, for ReadLive.
func LiveHeader(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if len(text) > traces.MaxLine {
			return nil, fmt.Errorf("%s: %w", name, traces.LineTooLongError{Line: line})
		}
		if t := strings.TrimSpace(text); t != "" && !strings.HasPrefix(t, "#") {
			if _, err := newLiveParser(t); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			return io.MultiReader(strings.NewReader(text), br), nil
		}
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no header line: want submit_offset_s,workload_id,num_gpus[,job_id,solo_s], then one job per line", name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}

type liveParser struct{ col map[string]int }

func newLiveParser(header string) (*liveParser, error) {
	p := &liveParser{col: map[string]int{}}
	for i, h := range strings.Split(header, ",") {
		p.col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"submit_offset_s", "workload_id", "num_gpus"} {
		if _, ok := p.col[need]; !ok {
			return nil, fmt.Errorf("header %q: missing column %s (want submit_offset_s,workload_id,num_gpus[,job_id,solo_s])", header, need)
		}
	}
	return p, nil
}

func (p *liveParser) parse(text string, line int) (traces.Job, error) {
	f := strings.Split(text, ",")
	get := func(name string) (string, bool) {
		i, ok := p.col[name]
		if !ok || i >= len(f) {
			return "", false
		}
		return strings.TrimSpace(f[i]), true
	}
	var sp traces.Job
	s, _ := get("submit_offset_s")
	sub, err := strconv.ParseFloat(s, 64)
	if err != nil || sub < 0 || sub > 1e9 || math.IsNaN(sub) {
		return sp, fmt.Errorf("column submit_offset_s: %q is not a number of seconds in [0, 1e9]", s)
	}
	sp.Submit = time.Duration(math.Round(sub * 1e9))
	if sp.Workload, _ = get("workload_id"); sp.Workload == "" {
		return sp, fmt.Errorf("column workload_id: empty")
	}
	s, _ = get("num_gpus")
	if sp.GPUs, err = strconv.Atoi(s); err != nil || sp.GPUs < 1 {
		return sp, fmt.Errorf("column num_gpus: %q is not a positive GPU count", s)
	}
	if s, ok := get("solo_s"); ok && s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v <= 1e9) {
			return sp, fmt.Errorf("column solo_s: %q is not a positive number of seconds up to 1e9", s)
		}
		sp.SoloS = v
	}
	if sp.ID, _ = get("job_id"); sp.ID == "" {
		sp.ID = "line" + strconv.Itoa(line)
	}
	return sp, nil
}
