package githubsim

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// BenchmarkSimpleRequests measures GET /repos/{o}/{r} served in parallel over
// loopback through net/http; it reports requests per second.
func BenchmarkSimpleRequests(b *testing.B) {
	w := newWorld(b)
	w.sim.SetPrimaryLimit(1 << 30)
	w.sim.SetRequestLogLimit(1000)
	url := w.base + "repos/alice/app"
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
			req.Header.Set("Authorization", "token tok-bot")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
