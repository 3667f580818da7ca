#!/usr/bin/env node
// kafkajs behind the uniform producer CLI (tests/clients/README.md).
//
//   kafkajs             new Kafka(...).producer(): kafkajs defaults, not idempotent
//   kafkajs-idempotent  producer({ idempotent: true }): InitProducerId, then
//                       Produce with producer id/epoch/sequences (acks=all only)
//
// kafkajs itself is not vendored: fetch_clients.sh node installs the pinned
// version of package-lock.json into the cache and run_client.py points
// NODE_PATH at it. kafkajs 2.2.4 speaks Produce v0-v7 (magic 2 from v3),
// InitProducerId v0-v1; it has gzip built in and no snappy/lz4/zstd codec
// (those are separate npm packages, not installed here), so those fail with
// kafkajs' own error.
//
// The records go out in sends of --extra batch=N (default 50) records,
// awaited one after the other, so per-partition order is the client's and an
// idempotent producer advances its sequences over several batches. kafkajs
// answers a send with one baseOffset per partition; record j of a partition
// within that send is at baseOffset + j (one record batch per partition and
// request).
'use strict'

const { Kafka, CompressionTypes, Partitioners, logLevel } = require('kafkajs')

function parseArgs(argv) {
  const a = {
    client: 'kafkajs', bootstrap: '', topic: '', count: -1, partitions: 0, compression: 'none', acks: 'all',
    keyPrefix: 'k', headers: false, timeoutS: 60, valueSize: 32, timestampBaseMs: 1700000000000, extra: {},
  }
  const flags = {
    '--client': v => { a.client = v }, '--bootstrap': v => { a.bootstrap = v }, '--topic': v => { a.topic = v },
    '--count': v => { a.count = parseInt(v, 10) }, '--partitions': v => { a.partitions = parseInt(v, 10) },
    '--compression': v => { a.compression = v }, '--acks': v => { a.acks = v },
    '--key-prefix': v => { a.keyPrefix = v }, '--timeout-s': v => { a.timeoutS = parseFloat(v) },
    '--value-size': v => { a.valueSize = parseInt(v, 10) },
    '--timestamp-base-ms': v => { a.timestampBaseMs = parseInt(v, 10) },
    '--extra': v => {
      const eq = v.indexOf('=')
      if (eq <= 0) usage('--extra wants k=v, got ' + JSON.stringify(v))
      a.extra[v.slice(0, eq)] = v.slice(eq + 1)
    },
  }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--headers') { a.headers = true; continue }
    const f = flags[argv[i]]
    if (!f || i + 1 >= argv.length) usage('unknown or incomplete flag ' + argv[i])
    f(argv[++i])
  }
  if (!a.bootstrap || !a.topic || !(a.count >= 0) || !(a.timeoutS > 0)) {
    usage('--bootstrap, --topic and --count are required')
  }
  return a
}

function usage(msg) {
  process.stderr.write('usage error: ' + msg + '\n')
  process.exit(2)
}

const a = parseArgs(process.argv.slice(2))
const idempotentDefault = a.client === 'kafkajs-idempotent'
const budgetMs = fraction => Math.max(1000, Math.round(a.timeoutS * fraction * 1000))
const key = i => `${a.keyPrefix}-${i}`
const value = i => { const v = `v-${i}-`; return v + 'x'.repeat(Math.max(0, a.valueSize - v.length)) }
const wantPartition = i => (a.partitions > 0 ? i % a.partitions : -1)

// ---- results: one JSON line per record, then the summary

const reported = new Array(a.count).fill(false)
let acked = 0
let failed = 0
let firstError = null
let finished = false

function report(i, partition, offset, error) {
  if (finished || i < 0 || i >= a.count || reported[i]) return
  reported[i] = true
  if (error === null) acked++
  else { failed++; if (firstError === null) firstError = error }
  process.stdout.write(JSON.stringify({ i, partition, offset, error }) + '\n')
}

function failUnreported(error) {
  for (let i = 0; i < a.count; i++) if (!reported[i]) report(i, wantPartition(i), -1, error)
}

function finish(headersSent) {
  if (finished) return
  finished = true
  const summary = {
    done: true, acked, failed, client: a.client, first_error: firstError,
    headers_sent: headersSent, timestamps_sent: true,
  }
  // exit only once stdout is flushed (it is a pipe: writes may be asynchronous)
  process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(acked === a.count ? 0 : 1))
}

function errorText(e) {
  if (!e) return 'unknown error'
  let s = `${e.name || 'Error'}: ${e.message}`
  const seen = new Set([e])
  for (let c = e.cause; c && !seen.has(c); c = c.cause) {
    seen.add(c)
    const t = `${c.name || 'Error'}: ${c.message}`
    if (!s.includes(t)) s += ` (caused by ${t})`
  }
  return s
}

// ---- kafkajs

const levels = { debug: logLevel.DEBUG, info: logLevel.INFO, warn: logLevel.WARN, error: logLevel.ERROR }
// kafkajs' console logger writes JSON lines to stdout; ours go to stderr.
const logCreator = () => ({ namespace, label, log }) => {
  const { message, ...rest } = log
  process.stderr.write(`kafkajs ${label} [${namespace}] ${message} ${JSON.stringify(rest)}\n`)
}

const codecs = {
  none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD,
}
const acks = { all: -1, 1: 1, 0: 0 }[a.acks]
let idempotent = idempotentDefault && acks === -1 // kafkajs refuses idempotence without acks=all
if (a.extra.idempotent !== undefined) idempotent = a.extra.idempotent === 'true'
const batch = Math.max(1, parseInt(a.extra.batch || '50', 10))

// Which partition kafkajs' partitioner gave each message (explicit i % P, or
// its default murmur2 partitioner by key).
const chosen = new Map() // message object -> partition
const createPartitioner = () => {
  const inner = Partitioners.DefaultPartitioner()
  return args => {
    const p = inner(args)
    chosen.set(args.message, p)
    return p
  }
}

async function main() {
  const kafka = new Kafka({
    clientId: 'pp-tests-' + a.client,
    brokers: a.bootstrap.split(','),
    connectionTimeout: budgetMs(0.2),
    requestTimeout: budgetMs(0.3),
    // retries x backoff (100 ms growing to at most 1 s) well inside half the budget
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: Math.max(1, Math.floor(budgetMs(0.5) / 1000)) },
    logLevel: levels[a.extra.log || 'error'] ?? logLevel.ERROR,
    logCreator,
  })
  const producer = kafka.producer({ idempotent, createPartitioner, allowAutoTopicCreation: true })
  await producer.connect()
  for (let start = 0; start < a.count && !finished; start += batch) {
    const idx = []
    const messages = []
    for (let i = start; i < Math.min(a.count, start + batch); i++) {
      const m = { key: key(i), value: value(i), timestamp: String(a.timestampBaseMs + i) }
      if (a.partitions > 0) m.partition = i % a.partitions
      if (a.headers) m.headers = { i: String(i), client: a.client }
      idx.push(i)
      messages.push(m)
    }
    let meta
    try {
      meta = await producer.send({ topic: a.topic, messages, acks, timeout: budgetMs(0.3), compression: codecs[a.compression] })
    } catch (e) {
      const text = errorText(e)
      idx.forEach(i => report(i, wantPartition(i), -1, text))
      // the cluster refused or could not be reached: the rest is not sent
      failUnreported('not sent: ' + text)
      break
    }
    const base = new Map() // partition -> baseOffset of this send
    for (const r of meta) {
      if (r.topicName === a.topic && Number(r.errorCode) === 0) base.set(Number(r.partition), BigInt(r.baseOffset))
    }
    const seq = new Map() // partition -> index within this send
    messages.forEach((m, k) => {
      const i = idx[k]
      const p = chosen.has(m) ? chosen.get(m) : wantPartition(i)
      const j = seq.get(p) || 0
      seq.set(p, j + 1)
      if (acks === 0) report(i, p, -1, null)
      else if (base.has(p)) report(i, p, Number(base.get(p) + BigInt(j)), null)
      else report(i, p, -1, `no offset for partition ${p} in the Produce response`)
    })
  }
  await Promise.race([producer.disconnect().catch(() => {}), new Promise(resolve => setTimeout(resolve, 1000))])
}

const deadline = setTimeout(() => {
  failUnreported(`timed out after ${a.timeoutS} s waiting for the delivery report`)
  finish(a.headers)
}, a.timeoutS * 1000)

main().then(
  () => { clearTimeout(deadline); failUnreported('no delivery report from the client'); finish(a.headers) },
  e => { clearTimeout(deadline); failUnreported(errorText(e)); finish(a.headers) },
)
