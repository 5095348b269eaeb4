package models

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/aegis-sched/aegis/internal/csvhead"
)

// lucidJob is one job of a Lucid co-location measurement.
type lucidJob struct {
	Key     string  // model/dataset/batch/amp, e.g. "ResNet18/CIFAR-10/32/0"
	Profile Profile // proxy pressure profile from Lucid's solo measurement
	Speed   float64 // co-located throughput normalized to solo (the rate)
}

// lucidPair is one row of Lucid's co-location table.
type lucidPair struct {
	Line int
	A, B lucidJob
}

// readLucid joins Lucid's co-location table (colocate_info.csv: model1,
// dataset1, gpu_num1, batchsize1, amp1, speed1, the same for 2, …) with its
// solo table (single_data.csv: model, dataset, batchsize, amp, speed,
// gpu_util, gmem_util, gmem, label). Lucid measured on RTX 3090s with
// nvidia-smi only, so the proxy profile is: SMACT ← gpu_util/100 (percent
// of time a kernel ran), DRAMA ← gmem_util/100 (percent of time device
// memory was read or written), PeakMiB ← gmem; SMOCC stays 0 (the pressure
// model does not use it). Rows of multi-GPU jobs are skipped.
func readLucid(colocate io.Reader, coName string, single io.Reader, singleName string) ([]lucidPair, error) {
	solo, err := readLucidSingle(single, singleName)
	if err != nil {
		return nil, err
	}
	var need []string
	for _, s := range []string{"1", "2"} {
		for _, c := range []string{"model", "dataset", "gpu_num", "batchsize", "amp", "speed"} {
			need = append(need, c+s)
		}
	}
	t, err := csvhead.NewReader(csv.NewReader(colocate), coName, need...)
	if err != nil {
		return nil, err
	}
	var out []lucidPair
	err = t.Each(func() error {
		line, get := t.Line, t.Get
		if get("gpu_num1") != "1" || get("gpu_num2") != "1" {
			return nil
		}
		p := lucidPair{Line: line}
		for i, j := range []*lucidJob{&p.A, &p.B} {
			s := strconv.Itoa(i + 1)
			j.Key = get("model"+s) + "/" + get("dataset"+s) + "/" + get("batchsize"+s) + "/" + get("amp"+s)
			prof, ok := solo[j.Key]
			if !ok {
				return fmt.Errorf("%s:%d: job %s has no solo row in %s", coName, line, j.Key, singleName)
			}
			j.Profile = prof
			v, err := strconv.ParseFloat(get("speed"+s), 64)
			if err != nil || !(v > 0) {
				return fmt.Errorf("%s:%d: column speed%s: want a positive number, got %q", coName, line, s, get("speed"+s))
			}
			j.Speed = v
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no single-GPU co-locations", coName)
	}
	return out, nil
}

func readLucidSingle(r io.Reader, name string) (map[string]Profile, error) {
	t, err := csvhead.NewReader(csv.NewReader(r), name, "model", "dataset", "batchsize", "amp", "gpu_util", "gmem_util", "gmem")
	if err != nil {
		return nil, err
	}
	out := map[string]Profile{}
	err = t.Each(func() error {
		get := t.Get
		var v [3]float64
		for k, c := range []string{"gpu_util", "gmem_util", "gmem"} {
			x, err := strconv.ParseFloat(get(c), 64)
			if err != nil || x < 0 {
				return fmt.Errorf("%s:%d: column %s: bad number %q", name, t.Line, c, get(c))
			}
			v[k] = x
		}
		key := get("model") + "/" + get("dataset") + "/" + get("batchsize") + "/" + get("amp")
		out[key] = Profile{PeakMiB: v[2], SMACT: Stat{Mean: v[0] / 100, P95: v[0] / 100}, DRAMA: Stat{Mean: v[1] / 100, P95: v[1] / 100}, UtilPct: v[0]}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return out, nil
}

// agreement measures how well a model's direction of slowdown agrees with
// measured co-location rates.
type agreement struct {
	Jobs int // job observations (two per pair)
	// Spearman is the rank correlation of predicted and measured slowdown
	// (1/rate) over all job observations.
	Spearman float64
	// PairSpearman is the rank correlation, over pairs, of the predicted and
	// measured pair slowdown (mean of the two jobs' 1/rate).
	PairSpearman float64
	// Sign is the fraction of pairs whose two jobs the model orders like the
	// measurement (which one is slowed more), over the SignPairs pairs whose
	// measured speeds differ by more than the threshold.
	Sign      float64
	SignPairs int
}

// lucidAgreement compares m's predicted co-location rates with Lucid's
// measured ones; pairs whose two measured speeds differ by threshold or
// less count as ties and are left out of Sign.
func lucidAgreement(m Interference, pairs []lucidPair, threshold float64) agreement {
	var pred, meas, pp, pm []float64
	var agree, n int
	for _, p := range pairs {
		ra := m.Rate(p.A.Profile, []Profile{p.B.Profile})
		rb := m.Rate(p.B.Profile, []Profile{p.A.Profile})
		pred = append(pred, 1/ra, 1/rb)
		meas = append(meas, 1/p.A.Speed, 1/p.B.Speed)
		pp = append(pp, (1/ra+1/rb)/2)
		pm = append(pm, (1/p.A.Speed+1/p.B.Speed)/2)
		if math.Abs(p.A.Speed-p.B.Speed) > threshold {
			n++
			if (ra < rb) == (p.A.Speed < p.B.Speed) {
				agree++
			}
		}
	}
	a := agreement{Jobs: len(pred), Spearman: Spearman(pred, meas), PairSpearman: Spearman(pp, pm), SignPairs: n}
	if n > 0 {
		a.Sign = float64(agree) / float64(n)
	}
	return a
}

// Spearman is the rank correlation of x and y (average ranks for ties);
// NaN when either is constant or the lengths differ.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}
