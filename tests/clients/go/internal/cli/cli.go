// Package cli is the uniform command line and output shared by the Go
// producer mains (cmd/sarama-produce, cmd/franz-produce): deterministic keys,
// values and timestamps, one JSON line per record, a summary line and the
// overall deadline. See tests/clients/README.md.
package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

type Args struct {
	Client          string
	Bootstrap       string
	Topic           string
	Count           int
	Partitions      int
	Compression     string
	Acks            string
	KeyPrefix       string
	Headers         bool
	TimeoutS        float64
	ValueSize       int
	TimestampBaseMs int64
	Extra           map[string]string

	HeadersSent    bool
	TimestampsSent bool

	deadline   time.Time
	mu         sync.Mutex
	reported   []bool
	acked      int
	failed     int
	firstError *string
	remaining  int
	allDone    chan struct{}
}

type extraFlag map[string]string

func (e extraFlag) String() string { return "" }
func (e extraFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("--extra wants k=v, got %q", s)
	}
	e[k] = v
	return nil
}

// Parse reads os.Args; exits 2 on a usage error.
func Parse(defaultClient string) *Args {
	a := &Args{Extra: map[string]string{}}
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&a.Client, "client", defaultClient, "client name for the summary")
	fs.StringVar(&a.Bootstrap, "bootstrap", "", "HOST:PORT[,HOST:PORT]")
	fs.StringVar(&a.Topic, "topic", "", "topic")
	fs.IntVar(&a.Count, "count", -1, "records")
	fs.IntVar(&a.Partitions, "partitions", 0, "explicit partition i % P when > 0")
	fs.StringVar(&a.Compression, "compression", "none", "none|gzip|snappy|lz4|zstd")
	fs.StringVar(&a.Acks, "acks", "all", "0|1|all")
	fs.StringVar(&a.KeyPrefix, "key-prefix", "k", "key prefix")
	fs.BoolVar(&a.Headers, "headers", false, "send headers where supported")
	fs.Float64Var(&a.TimeoutS, "timeout-s", 60, "overall deadline")
	fs.IntVar(&a.ValueSize, "value-size", 32, "value length (at least the v-<i>- prefix)")
	fs.Int64Var(&a.TimestampBaseMs, "timestamp-base-ms", 1700000000000, "record i gets base + i")
	fs.Var(extraFlag(a.Extra), "extra", "k=v client option (repeatable)")
	_ = fs.Parse(os.Args[1:])
	if a.Bootstrap == "" || a.Topic == "" || a.Count < 0 {
		fmt.Fprintln(os.Stderr, "usage error: --bootstrap, --topic and --count are required")
		os.Exit(2)
	}
	a.deadline = time.Now().Add(time.Duration(a.TimeoutS * float64(time.Second)))
	a.reported = make([]bool, a.Count)
	a.remaining = a.Count
	a.allDone = make(chan struct{})
	if a.Count == 0 {
		close(a.allDone)
	}
	return a
}

// Budget is a client-side timeout: a fraction of --timeout-s, at least 1 s.
func (a *Args) Budget(fraction float64) time.Duration {
	d := time.Duration(a.TimeoutS * fraction * float64(time.Second))
	if d < time.Second {
		d = time.Second
	}
	return d
}

func (a *Args) Deadline() time.Time { return a.deadline }

func (a *Args) Key(i int) string { return fmt.Sprintf("%s-%d", a.KeyPrefix, i) }

func (a *Args) Value(i int) string {
	v := fmt.Sprintf("v-%d-", i)
	if len(v) < a.ValueSize {
		v += strings.Repeat("x", a.ValueSize-len(v))
	}
	return v
}

// Partition is i % P, or -1 when --partitions was not given.
func (a *Args) Partition(i int) int32 {
	if a.Partitions > 0 {
		return int32(i % a.Partitions)
	}
	return -1
}

func (a *Args) Timestamp(i int) time.Time { return time.UnixMilli(a.TimestampBaseMs + int64(i)) }

type line struct {
	I         int     `json:"i"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Error     *string `json:"error"`
}

func (a *Args) report(i int, partition int32, offset int64, err *string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i < 0 || i >= a.Count || a.reported[i] {
		return
	}
	a.reported[i] = true
	if err == nil {
		a.acked++
	} else {
		a.failed++
		if a.firstError == nil {
			a.firstError = err
		}
	}
	b, _ := json.Marshal(line{i, partition, offset, err})
	os.Stdout.Write(append(b, '\n'))
	a.remaining--
	if a.remaining == 0 {
		close(a.allDone)
	}
}

func (a *Args) OK(i int, partition int32, offset int64) { a.report(i, partition, offset, nil) }

func (a *Args) Fail(i int, partition int32, err string) { a.report(i, partition, -1, &err) }

// Reported says whether record i has its line already.
func (a *Args) Reported(i int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reported[i]
}

// AwaitAll waits for every report until the deadline; true when all came.
func (a *Args) AwaitAll() bool {
	select {
	case <-a.allDone:
		return true
	case <-time.After(time.Until(a.deadline)):
		return false
	}
}

func (a *Args) FailUnreported(err string) {
	for i := 0; i < a.Count; i++ {
		a.Fail(i, a.Partition(i), err)
	}
}

// Bounded runs f and waits for it at most d.
func Bounded(f func(), d time.Duration) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// Finish prints the summary and exits: 0 only when every record was acked.
func (a *Args) Finish() {
	a.mu.Lock()
	b, _ := json.Marshal(map[string]any{
		"done": true, "acked": a.acked, "failed": a.failed, "client": a.Client,
		"first_error": a.firstError, "headers_sent": a.HeadersSent, "timestamps_sent": a.TimestampsSent,
	})
	os.Stdout.Write(append(b, '\n'))
	code := 1
	if a.acked == a.Count {
		code = 0
	}
	os.Exit(code)
}
