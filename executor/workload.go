package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

// Workload is how to run one catalog workload on this machine: the command
// a job of that workload starts, from the workloads YAML file.
type Workload struct {
	// ID is the catalog workload id a trace names.
	ID string `yaml:"id"`
	// Command is the argv list; Command[0] is looked up in PATH.
	Command []string `yaml:"command"`
	// Env holds extra environment variables (added to the executor's own).
	Env map[string]string `yaml:"env"`
	// Dir is the working directory; empty means the executor's.
	Dir string `yaml:"dir"`
	// OOMExitCode, when set, is an exit code that by itself means the job
	// ran out of GPU memory.
	OOMExitCode *int `yaml:"oom_exit_code"`
}

type workloadFile struct {
	Workloads []Workload `yaml:"workloads"`
}

// ParseWorkloads reads a workloads YAML file's content:
//
//	workloads:
//	  - id: resnet18_cifar100_bs128_20e_1gpu
//	    command: [python3, train.py, --model, resnet18]
//	    env: {OMP_NUM_THREADS: "4"}
//	    dir: /srv/jobs
//	    oom_exit_code: 3
//
// Unknown keys, a missing id or command, a repeated id, a reserved
// environment variable (CUDA_VISIBLE_DEVICES and the MPS variables are the
// executor's) or an exit code outside 1..255 are errors naming the file and
// line.
func ParseWorkloads(data []byte, name string) (map[string]*Workload, error) {
	var f workloadFile
	root, err := strictyaml.Decode(data, name, &f)
	if err != nil {
		return nil, err
	}
	items := listItems(root)
	line := func(i int) string {
		if i < len(items) {
			return fmt.Sprintf("%s:%d", name, items[i].Line)
		}
		return name
	}
	if len(f.Workloads) == 0 {
		return nil, fmt.Errorf("%s: no workloads (want a list under workloads:)", name)
	}
	out := map[string]*Workload{}
	for i := range f.Workloads {
		w := &f.Workloads[i]
		switch {
		case strings.TrimSpace(w.ID) == "":
			return nil, fmt.Errorf("%s: workload %d: field id: empty", line(i), i+1)
		case len(w.Command) == 0 || w.Command[0] == "":
			return nil, fmt.Errorf("%s: workload %s: field command: want a non-empty argv list, e.g. [python3, train.py]", line(i), w.ID)
		case out[w.ID] != nil:
			return nil, fmt.Errorf("%s: workload %s: field id: given twice", line(i), w.ID)
		case w.OOMExitCode != nil && (*w.OOMExitCode < 1 || *w.OOMExitCode > 255):
			return nil, fmt.Errorf("%s: workload %s: field oom_exit_code: %d is not in 1..255", line(i), w.ID, *w.OOMExitCode)
		}
		for k := range w.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, fmt.Errorf("%s: workload %s: field env: bad variable name %q", line(i), w.ID, k)
			}
			if slices.Contains(reservedEnv, k) {
				return nil, fmt.Errorf("%s: workload %s: field env: %s is set by the executor", line(i), w.ID, k)
			}
		}
		out[w.ID] = w
	}
	return out, nil
}

// ReadWorkloads reads a workloads YAML file.
func ReadWorkloads(path string) (map[string]*Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	ws, err := ParseWorkloads(b, path)
	if err != nil {
		return nil, err
	}
	// A relative working directory is relative to the file.
	for _, w := range ws {
		if w.Dir != "" && !filepath.IsAbs(w.Dir) {
			w.Dir = filepath.Join(filepath.Dir(path), w.Dir)
		}
	}
	return ws, nil
}

// reservedEnv are the variables the executor sets for every attempt.
var reservedEnv = []string{"CUDA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"}

// listItems returns the nodes of the workloads list, for line numbers.
func listItems(root *yaml.Node) []*yaml.Node {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "workloads" && n.Content[i+1].Kind == yaml.SequenceNode {
			return n.Content[i+1].Content
		}
	}
	return nil
}
