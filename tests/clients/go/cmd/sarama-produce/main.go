// sarama-produce: github.com/IBM/sarama's AsyncProducer behind the uniform
// CLI (tests/clients/README.md). The protocol generation comes from
// Config.Version, taken from the client name (sarama-0.8.2 -> 0.8.2.0:
// Produce v0, magic 0; sarama-0.10.0 -> 0.10.0.0: Produce v2, magic 1;
// "sarama" keeps sarama's default) or from --extra version=X.Y.Z.W.
package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"ppclients/internal/cli"
)

func main() {
	a := cli.Parse("sarama")
	cfg := sarama.NewConfig()
	cfg.ClientID = "pp-tests-" + a.Client
	version := a.Extra["version"]
	if version == "" && strings.HasPrefix(a.Client, "sarama-") {
		version = strings.TrimPrefix(a.Client, "sarama-")
		for strings.Count(version, ".") < 3 {
			version += ".0"
		}
	}
	if version != "" {
		v, err := sarama.ParseKafkaVersion(version)
		if err != nil {
			a.FailUnreported("sarama config: " + err.Error())
			a.Finish()
		}
		cfg.Version = v
	}
	switch a.Acks {
	case "0":
		cfg.Producer.RequiredAcks = sarama.NoResponse
	case "1":
		cfg.Producer.RequiredAcks = sarama.WaitForLocal
	default:
		cfg.Producer.RequiredAcks = sarama.WaitForAll
	}
	switch a.Compression {
	case "gzip":
		cfg.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		cfg.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		cfg.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		cfg.Producer.Compression = sarama.CompressionZSTD
	}
	if a.Partitions > 0 {
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
	}
	if s := a.Extra["idempotent"]; s != "" {
		cfg.Producer.Idempotent, _ = strconv.ParseBool(s)
		if cfg.Producer.Idempotent {
			cfg.Net.MaxOpenRequests = 1
		}
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Producer.Timeout = 10 * time.Second
	cfg.Producer.Retry.Max = 3
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.Retry.Max = 3
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Metadata.Timeout = a.Budget(0.5)
	cfg.Net.DialTimeout = a.Budget(0.2)
	cfg.Net.ReadTimeout = a.Budget(0.3)
	cfg.Net.WriteTimeout = a.Budget(0.3)
	a.TimestampsSent = cfg.Version.IsAtLeast(sarama.V0_10_0_0)
	a.HeadersSent = a.Headers && cfg.Version.IsAtLeast(sarama.V0_11_0_0)

	// NewAsyncProducer fetches metadata first and can block past our
	// deadline against a broker that accepts but never answers.
	type made struct {
		p   sarama.AsyncProducer
		err error
	}
	ch := make(chan made, 1)
	go func() {
		p, err := sarama.NewAsyncProducer(strings.Split(a.Bootstrap, ","), cfg)
		ch <- made{p, err}
	}()
	var p sarama.AsyncProducer
	select {
	case m := <-ch:
		if m.err != nil {
			a.FailUnreported(m.err.Error())
			a.Finish()
		}
		p = m.p
	case <-time.After(time.Until(a.Deadline())):
		a.FailUnreported(fmt.Sprintf("timed out after %g s creating the producer (sarama's first metadata request got no answer)", a.TimeoutS))
		a.Finish()
	}
	go func() {
		for m := range p.Successes() {
			off := m.Offset
			if cfg.Producer.RequiredAcks == sarama.NoResponse {
				off = -1 // no ProduceResponse, so no offset
			}
			a.OK(m.Metadata.(int), m.Partition, off)
		}
	}()
	go func() {
		for e := range p.Errors() {
			a.Fail(e.Msg.Metadata.(int), e.Msg.Partition, e.Err.Error())
		}
	}()
	deadline := time.After(time.Until(a.Deadline()))
	for i := 0; i < a.Count; i++ {
		m := &sarama.ProducerMessage{
			Topic:     a.Topic,
			Key:       sarama.StringEncoder(a.Key(i)),
			Value:     sarama.StringEncoder(a.Value(i)),
			Timestamp: a.Timestamp(i),
			Metadata:  i,
		}
		if a.Partitions > 0 {
			m.Partition = a.Partition(i)
		}
		if a.HeadersSent { // sarama rejects headers below Config.Version 0.11
			m.Headers = []sarama.RecordHeader{
				{Key: []byte("i"), Value: []byte(strconv.Itoa(i))},
				{Key: []byte("client"), Value: []byte(a.Client)},
			}
		}
		select {
		case p.Input() <- m:
		case <-deadline:
			a.FailUnreported(fmt.Sprintf("timed out after %g s: the producer did not accept record %d", a.TimeoutS, i))
			cli.Bounded(func() { p.AsyncClose() }, time.Second)
			a.Finish()
		}
	}
	if !a.AwaitAll() {
		a.FailUnreported(fmt.Sprintf("timed out after %g s waiting for the delivery report", a.TimeoutS))
	}
	cli.Bounded(func() { p.AsyncClose() }, time.Second)
	a.Finish()
}
