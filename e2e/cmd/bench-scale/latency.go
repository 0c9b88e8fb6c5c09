package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/scyllakube/scylla-operator/e2e/framework"
)

// The histograms the reaction latency is read from, with the label that names the controller in each: client-go's
// workqueue metrics (the queue name is the controller's name, see controllerhelpers.NewQueue) and pkg/metrics' sync
// duration, whose buckets are finer than the workqueue's powers of ten.
const (
	queueDurationMetric = "workqueue_queue_duration_seconds"
	workDurationMetric  = "workqueue_work_duration_seconds"
	syncDurationMetric  = "scylla_operator_controller_sync_duration_seconds"
)

var controllerLabels = map[string]string{
	queueDurationMetric: "name",
	workDurationMetric:  "name",
	syncDurationMetric:  "controller",
}

// ControllerLatency is how quickly one controller reacted while the ScyllaClusters converged: how long a key waited
// in its queue and how long its sync took. Their sum is the time from a change the controller watches (a pod
// becoming Ready) to its answer being written (the next scale step).
type ControllerLatency struct {
	Program    string `json:"program"`
	Controller string `json:"controller"`
	// Syncs is how many keys the controller took from its queue.
	Syncs           int     `json:"syncs"`
	QueueP50Seconds float64 `json:"queueP50Seconds"`
	QueueP99Seconds float64 `json:"queueP99Seconds"`
	// SyncP50Seconds and SyncP99Seconds come from the sync duration histogram, or from the workqueue's work duration
	// for a queue that has none.
	SyncP50Seconds float64 `json:"syncP50Seconds"`
	SyncP99Seconds float64 `json:"syncP99Seconds"`
	// ReactionP50Seconds and ReactionP99Seconds add the queue's and the sync's quantiles: an estimate, as the
	// metrics do not keep which wait went with which sync (the sum of the p99s bounds the 98th percentile of the sum).
	ReactionP50Seconds float64 `json:"reactionP50Seconds"`
	ReactionP99Seconds float64 `json:"reactionP99Seconds"`
}

// bucket is one cumulative histogram bucket: how many observations were at most UpperBound.
type bucket struct {
	UpperBound float64
	Count      float64
}

// histogram is a cumulative histogram, its buckets sorted by upper bound and the last one +Inf.
type histogram []bucket

// count is the number of observations.
func (h histogram) count() float64 {
	if len(h) == 0 {
		return 0
	}
	return h[len(h)-1].Count
}

// sub returns the observations of h that are not in before, an earlier scrape of the same histogram.
func (h histogram) sub(before histogram) histogram {
	earlier := map[float64]float64{}
	for _, b := range before {
		earlier[b.UpperBound] = b.Count
	}
	out := make(histogram, 0, len(h))
	for _, b := range h {
		out = append(out, bucket{UpperBound: b.UpperBound, Count: b.Count - earlier[b.UpperBound]})
	}
	return out
}

// quantile estimates the q-quantile of the observations as Prometheus' histogram_quantile does: it finds the bucket
// holding the observation of rank q×count and interpolates linearly within it, the first bucket starting at 0 (or
// at its upper bound if that is not positive). A rank in the +Inf bucket gives the highest finite upper bound. It
// returns NaN for a histogram without observations or without a +Inf bucket.
func quantile(q float64, h histogram) float64 {
	if len(h) < 2 || !math.IsInf(h[len(h)-1].UpperBound, 1) || h.count() == 0 {
		return math.NaN()
	}
	rank := q * h.count()
	b := sort.Search(len(h)-1, func(i int) bool { return h[i].Count >= rank })
	if b == len(h)-1 {
		return h[len(h)-2].UpperBound
	}
	if b == 0 && h[0].UpperBound <= 0 {
		return h[0].UpperBound
	}
	start, end, count := 0.0, h[b].UpperBound, h[b].Count
	if b > 0 {
		start = h[b-1].UpperBound
		count -= h[b-1].Count
		rank -= h[b-1].Count
	}
	return start + (end-start)*(rank/count)
}

// histograms are the histograms of one scrape, by metric name and then by controller name.
type histograms map[string]map[string]histogram

// parseHistograms reads the histograms of controllerLabels from a scrape in the Prometheus text format.
func parseHistograms(r io.Reader) (histograms, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("can't parse the metrics: %w", err)
	}
	out := histograms{}
	for name, label := range controllerLabels {
		family, ok := families[name]
		if !ok || family.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		out[name] = map[string]histogram{}
		for _, m := range family.GetMetric() {
			controller := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					controller = l.GetValue()
				}
			}
			out[name][controller] = fromDTO(m.GetHistogram())
		}
	}
	return out, nil
}

// fromDTO returns the buckets of a parsed histogram, adding the +Inf bucket if the text left it out.
func fromDTO(h *dto.Histogram) histogram {
	out := make(histogram, 0, len(h.GetBucket())+1)
	for _, b := range h.GetBucket() {
		out = append(out, bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpperBound < out[j].UpperBound })
	if len(out) == 0 || !math.IsInf(out[len(out)-1].UpperBound, 1) {
		out = append(out, bucket{UpperBound: math.Inf(1), Count: float64(h.GetSampleCount()) + h.GetSampleCountFloat()})
	}
	return out
}

// reactionLatencies returns the latency of each controller of program that took keys from its queue between the
// scrapes before and after.
func reactionLatencies(program string, before, after histograms) []ControllerLatency {
	delta := func(metric, controller string) histogram {
		return after[metric][controller].sub(before[metric][controller])
	}
	var out []ControllerLatency
	for controller := range after[queueDurationMetric] {
		queue := delta(queueDurationMetric, controller)
		if queue.count() == 0 {
			continue
		}
		sync := delta(syncDurationMetric, controller)
		if sync.count() == 0 {
			sync = delta(workDurationMetric, controller)
		}
		l := ControllerLatency{
			Program:         program,
			Controller:      controller,
			Syncs:           int(queue.count()),
			QueueP50Seconds: quantile(0.5, queue),
			QueueP99Seconds: quantile(0.99, queue),
			SyncP50Seconds:  quantile(0.5, sync),
			SyncP99Seconds:  quantile(0.99, sync),
		}
		// JSON has no NaN: a queue whose keys are all still being synced has no sync quantiles yet.
		if math.IsNaN(l.SyncP50Seconds) {
			l.SyncP50Seconds, l.SyncP99Seconds = 0, 0
		}
		l.ReactionP50Seconds = l.QueueP50Seconds + l.SyncP50Seconds
		l.ReactionP99Seconds = l.QueueP99Seconds + l.SyncP99Seconds
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Controller < out[j].Controller })
	return out
}

// scrapeHistograms fetches http://<address>/metrics and parses its histograms.
func scrapeHistograms(ctx context.Context, address string) (histograms, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("can't scrape %s: %w", address, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("can't scrape %s: %s", address, resp.Status)
	}
	return parseHistograms(resp.Body)
}

// servingAddressRE matches the line pkg/serving logs once it listens, which is the only place a program started with
// --serving-address=127.0.0.1:0 tells its port.
var servingAddressRE = regexp.MustCompile(`"Serving health and metrics endpoints".*\baddress="([^"]+)"`)

// waitServingAddress returns the address of the /metrics endpoint that the program logging to logPath listens on.
func waitServingAddress(ctx context.Context, name, logPath string) (string, error) {
	var address string
	err := framework.WaitFor(ctx, 30*time.Second, func(context.Context) (bool, error) {
		data, err := os.ReadFile(logPath)
		if err != nil {
			return false, nil
		}
		if m := servingAddressRE.FindSubmatch(data); m != nil {
			address = string(m[1])
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("%s did not log its serving address in %s: %w", name, logPath, err)
	}
	return address, nil
}

// formatSeconds prints a latency with a unit that keeps two or three significant digits.
func formatSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2fs", s)
	case s >= 0.01:
		return fmt.Sprintf("%.0fms", s*1000)
	case s >= 0.001:
		return fmt.Sprintf("%.1fms", s*1000)
	default:
		return fmt.Sprintf("%.0fµs", s*1e6)
	}
}
