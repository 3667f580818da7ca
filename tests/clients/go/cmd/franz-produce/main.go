// franz-produce: github.com/twmb/franz-go's kgo client behind the uniform CLI
// (tests/clients/README.md). Idempotent by default (InitProducerId, then
// Produce with producer id/epoch/sequences, magic 2); --acks 0|1 or
// --extra idempotent=false make it a plain producer.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"ppclients/internal/cli"
)

func main() {
	a := cli.Parse("franz-go")
	a.TimestampsSent = true
	a.HeadersSent = a.Headers
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(a.Bootstrap, ",")...),
		kgo.DefaultProduceTopic(a.Topic),
		kgo.ClientID("pp-tests-" + a.Client),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.DialTimeout(a.Budget(0.2)),
		kgo.ProduceRequestTimeout(a.Budget(0.3)),
		// kgo measures the delivery timeout from each record's Timestamp
		// (time.Since(records[0].Timestamp)), and ours are the fixed base + i:
		// add their age so the timeout means "budget from now".
		kgo.RecordDeliveryTimeout(max(time.Second, time.Since(a.Timestamp(0))+a.Budget(0.8))),
		kgo.RetryTimeout(a.Budget(0.5)),
		// Waiting for a topic's metadata is not bound by the (timestamp-based)
		// delivery timeout above but by RecordRetries: fixed 250 ms backoff
		// and as many tries as fit in half the budget.
		kgo.RetryBackoffFn(func(int) time.Duration { return 250 * time.Millisecond }),
		kgo.RecordRetries(int(a.Budget(0.5) / (250 * time.Millisecond))),
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
	switch a.Acks {
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	if lvl := a.Extra["log"]; lvl != "" { // --extra log=debug|info|warn|error, to stderr
		levels := map[string]kgo.LogLevel{"debug": kgo.LogLevelDebug, "info": kgo.LogLevelInfo,
			"warn": kgo.LogLevelWarn, "error": kgo.LogLevelError}
		if l, ok := levels[lvl]; ok {
			opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, l, nil)))
		}
	}
	if s := a.Extra["idempotent"]; s != "" {
		if on, _ := strconv.ParseBool(s); !on {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
	}
	switch a.Compression {
	case "gzip":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "snappy":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "lz4":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	default:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	}
	if a.Partitions > 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		a.FailUnreported(err.Error())
		a.Finish()
	}
	ctx := context.Background() // the deadline is AwaitAll's, so records fail with the client's own errors
	for i := 0; i < a.Count; i++ {
		r := &kgo.Record{
			Key:       []byte(a.Key(i)),
			Value:     []byte(a.Value(i)),
			Timestamp: a.Timestamp(i),
		}
		if a.Partitions > 0 {
			r.Partition = a.Partition(i)
		}
		if a.Headers {
			r.Headers = []kgo.RecordHeader{
				{Key: "i", Value: []byte(strconv.Itoa(i))},
				{Key: "client", Value: []byte(a.Client)},
			}
		}
		idx := i
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				a.Fail(idx, a.Partition(idx), err.Error()) // r.Partition is 0 when none was chosen
			} else {
				a.OK(idx, r.Partition, r.Offset)
			}
		})
	}
	if !a.AwaitAll() {
		a.FailUnreported(fmt.Sprintf("timed out after %g s waiting for the delivery report", a.TimeoutS))
	}
	cli.Bounded(func() { cl.Close() }, time.Second)
	a.Finish()
}
