package experiments

// FigureNames are the figures a spec may ask for (drawn by aegis plot's
// package from the result files): normalized (Figure 3, from
// normalized.csv), jct-cdf (Figure 4, jobs.csv), queue-exec (Figure 5,
// normalized.csv), stability (Figure 6, stability.csv), thresholds (Figure
// 7, thresholds.csv) and seeds-cdf (makespan and JCT across seeds,
// cells.csv).
var FigureNames = []string{"normalized", "jct-cdf", "queue-exec", "stability", "thresholds", "seeds-cdf"}
