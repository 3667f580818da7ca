{{/*
The dashboard and the alert rules, read as they are from files/ (so Grafana's
and Prometheus' own {{ }} templates pass through untouched), with the one
value that depends on the config: producer.buffer_memory_bytes, which the
proxy does not export. The plain files carry its default, 67108864.
*/}}
{{- define "produce-proxy.bufferMemoryBytes" -}}
{{- dig "producer" "buffer_memory_bytes" 67108864 .Values.config | int64 -}}
{{- end }}

{{- define "produce-proxy.dashboardJson" -}}
{{- .Files.Get "files/grafana-dashboard.json" | replace "67108864" (include "produce-proxy.bufferMemoryBytes" .) -}}
{{- end }}

{{- define "produce-proxy.prometheusRules" -}}
{{- .Files.Get "files/prometheus-rules.yaml" | replace "0.9 * 67108864" (printf "0.9 * %s" (include "produce-proxy.bufferMemoryBytes" .)) -}}
{{- end }}
