package assemble

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// lockBarrier holds every request that creates ref (a REST creation or a
// push) until want of them
// are in flight, then lets them all through: the runs race for the lock
// itself, not for who lists the job first.
type lockBarrier struct {
	next    http.RoundTripper
	ref     string
	want    int
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

func (b *lockBarrier) RoundTrip(req *http.Request) (*http.Response, error) {
	rest := strings.HasSuffix(req.URL.Path, "/git/refs")
	if req.Method == http.MethodPost && (rest || strings.HasSuffix(req.URL.Path, "/git-receive-pack")) && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		// a REST creation names the ref in JSON; a push's command line
		// ends with it (then the capabilities or a newline)
		if rest && bytes.Contains(body, []byte(`"`+b.ref+`"`)) ||
			!rest && (bytes.Contains(body, []byte(" "+b.ref+"\x00")) || bytes.Contains(body, []byte(" "+b.ref+"\n"))) {
			b.mu.Lock()
			b.arrived++
			if b.arrived == b.want {
				close(b.open)
			}
			b.mu.Unlock()
			// A run that never gets here is a bug the test reports (both
			// runs must try the lock); the wait only keeps it from hanging.
			select {
			case <-b.open:
			case <-time.After(time.Minute):
			}
		}
	}
	return b.next.RoundTrip(req)
}

func (b *lockBarrier) tried() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.arrived
}

// TestLockRaceBothTry: the last shard and its redelivery both store it,
// both see every shard and both send the lock's creation at the same
// moment. Exactly one creation succeeds; the other run must read the
// holder and stay out, however the two requests are ordered. (The
// lock-already-listed path is TestShardedAllOrders'; without the barrier
// two runs rarely both reach the creation.)
func TestLockRaceBothTry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for round := range 2 {
		node := fmt.Sprintf("IC_bothtry%d", round)
		c, jobID, ev := shardedJob(t, node)
		last := len(ev) - 1
		for i := range last {
			o := h.run(t, ev[i])
			require.NoError(t, o.err, o.log)
			require.False(t, o.res.Ready, o.log)
		}
		direct := h.rt
		barrier := &lockBarrier{next: direct, ref: contract.LockRef(jobID), want: 2, open: make(chan struct{})}
		h.rt = barrier
		out := runConcurrently(t, h, [][]byte{ev[last], ev[last]}, []int{0, 1}, 2)
		h.rt = direct
		require.Equal(t, 2, barrier.tried(), "both runs tried to create the lock")
		assertOneProceeded(t, h, out, jobID, c, "exactly one of two runs creating the lock at once proceeds")
		for _, o := range out {
			if !o.res.Ready {
				require.NotNil(t, o.res.Holder, o.log)
				assert.NotEqual(t, o.runID, o.res.Holder.RunID, "the loser names the winner as the holder")
			}
		}
		assert.Len(t, h.sim.Issues(control), round+1, "one log issue per job")
	}
}
