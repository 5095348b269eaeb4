package models

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// sourceCatalogCols are the columns readSourceCatalog needs.
var sourceCatalogCols = []string{"workload_id", "num_gpus", "gpu_label", "solo_end_to_end_s", "peak_mem_mib",
	"smact_mean", "smact_p95", "smocc_mean", "smocc_p95", "drama_mean", "drama_p95", "nvsmi_util_mean_pct",
	"horus_est_mib", "faketensor_est_mib", "gpumemnet_est_mib", "lucid_class", "profile_source"}

// LoadCatalog reads a workload catalog file in either format: the derived
// one (header starting "workload,", what models/data holds and ReadCatalog
// parses) or the AEGIS artifact's source characterization (header starting
// "workload_id,", see readSourceCatalog).
func LoadCatalog(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "workload_id,") {
			return readSourceCatalog(bytes.NewReader(data), path)
		}
		break
	}
	return ReadCatalog(bytes.NewReader(data), path)
}

// readSourceCatalog reads the AEGIS artifact's workload characterization
// (the layout of ../shared/calibration/aegis/workload_catalog_a100.csv) with
// the rules models/internal/gencatalog applies to derive the embedded A100
// catalog, so both give the same Catalog: solo_s = solo_end_to_end_s; a
// missing p95 is the mean; a missing utilization is predicted from SMACT
// mean by least squares over the full_run rows; a memory estimate blank or
// ≥ 40000 is unavailable (0); a 2-GPU workload profiled on one GPU reuses
// that GPU's row for the other.
func readSourceCatalog(r io.Reader, name string) (*Catalog, error) {
	derived, _, _, err := DeriveSourceCatalog(r, name)
	if err != nil {
		return nil, err
	}
	return ReadCatalog(strings.NewReader(derived), name+" (converted)")
}

// DeriveSourceCatalog converts the AEGIS artifact's workload
// characterization into the derived catalog format (header and rows, the
// text ReadCatalog parses) by the rules readSourceCatalog states. It also
// returns the fitted line util_pct = a + b·smact_mean used to fill missing
// utilizations. models/internal/gencatalog writes its output to
// models/data/catalog_a100.csv.
func DeriveSourceCatalog(r io.Reader, name string) (derived string, a, b float64, err error) {
	rows, err := readTable(r, name, sourceCatalogCols)
	if err != nil {
		return "", 0, 0, err
	}
	if len(rows) == 0 {
		return "", 0, 0, fmt.Errorf("%s: no workload rows", name)
	}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	// util = a + b*smact over the fully profiled rows (as gencatalog).
	var n, sx, sy, sxx, sxy float64
	for _, r := range rows {
		if r["profile_source"] != "full_run" || r["nvsmi_util_mean_pct"] == "" || num(r["smact_mean"]) == 0 {
			continue
		}
		x, y := num(r["smact_mean"]), num(r["nvsmi_util_mean_pct"])
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	a = (sy - b*sx) / n
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	est := func(s string) string {
		if s == "" || num(s) >= 40000 {
			return "0"
		}
		return s
	}
	count := map[string]int{}
	for _, r := range rows {
		count[r["workload_id"]]++
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(catalogCols, ",") + "\n")
	for _, r := range rows {
		id := r["workload_id"]
		gpus := r["num_gpus"]
		idx := 0
		if r["gpu_label"] == "gpu_b" {
			idx = 1
		}
		util := r["nvsmi_util_mean_pct"]
		if util == "" {
			util = fmt.Sprintf("%.2f", a+b*num(r["smact_mean"]))
		}
		line := func(idx int) {
			fmt.Fprintf(&sb, "%s,%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
				id, gpus, idx, r["solo_end_to_end_s"], r["peak_mem_mib"],
				r["smact_mean"], or(r["smact_p95"], r["smact_mean"]),
				r["smocc_mean"], or(r["smocc_p95"], r["smocc_mean"]),
				r["drama_mean"], or(r["drama_p95"], r["drama_mean"]),
				util, est(r["horus_est_mib"]), est(r["faketensor_est_mib"]), est(r["gpumemnet_est_mib"]),
				r["lucid_class"])
		}
		line(idx)
		if gpus == "2" && count[id] == 1 {
			line(1)
		}
	}
	return sb.String(), a, b, nil
}
