{{/*
Names and labels, the usual helm way. The sidecar's own templates, which other
charts include, are in _sidecar.tpl.
*/}}
{{- define "produce-proxy.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "produce-proxy.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "produce-proxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "produce-proxy.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "produce-proxy.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "produce-proxy.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
produce-proxy.toml from the effective config (produce-proxy.config). Each
value goes through toJson: a JSON string, number, boolean or array of strings
is also valid TOML, and numbers print as integers (toToml would print helm's
float64 values as floats, which the proxy rejects for integer keys). A list of
maps is an array of tables: config.listener.principals renders as
[[listener.principals]] entries.
*/}}
{{- define "produce-proxy.configToml" -}}
# Rendered by the produce-proxy chart from .Values.config.
{{- $config := .Values.config }}
{{- if or (include "produce-proxy.node.enabled" .) (include "produce-proxy.spool.volume" .) }}
{{- $config = include "produce-proxy.config" . | fromJson }}
{{- end }}
{{- range $section, $keys := $config }}

[{{ $section }}]
{{- range $key, $value := $keys }}
{{- if not (or (kindIs "map" $value) (include "produce-proxy.isTableArray" $value)) }}
{{ $key }} = {{ toJson $value }}
{{- end }}
{{- end }}
{{- range $key, $value := $keys }}
{{- if include "produce-proxy.isTableArray" $value }}
{{- range $entry := $value }}

[[{{ $section }}.{{ $key }}]]
{{- range $k, $v := $entry }}
{{ $k }} = {{ toJson $v }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- /* A map is a nested section: [upstream.tls], [listener.sasl] */}}
{{- range $sub, $subkeys := $keys }}
{{- if kindIs "map" $subkeys }}

[{{ $section }}.{{ $sub }}]
{{- range $key, $value := $subkeys }}
{{ $key }} = {{ toJson $value }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- define "produce-proxy.isTableArray" -}}
{{- if and (kindIs "slice" .) (gt (len .) 0) (kindIs "map" (first .)) }}true{{ end -}}
{{- end }}

{{/*
"true" when node.enabled: one proxy per node (templates/daemonset.yaml)
instead of the sidecar. Absent node values (a parent's older copy) mean off.
*/}}
{{- define "produce-proxy.node.enabled" -}}
{{- with .Values.node }}{{ if .enabled }}true{{ end }}{{ end -}}
{{- end }}

{{/*
The config the proxy runs with, as JSON: .Values.config, and in node mode its
listener on all interfaces at node.port. With node.expose=service the
advertised address is the Service's DNS name (clients bootstrap and stay
there); with hostPort the DaemonSet passes the node's IP with --set, since
it differs per node.
*/}}
{{- define "produce-proxy.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- if include "produce-proxy.node.enabled" . -}}
{{- $port := int .Values.node.port -}}
{{- $listener := dict "address" (printf "0.0.0.0:%d" $port) -}}
{{- if eq .Values.node.expose "service" -}}
{{- $_ := set $listener "advertised_address" (printf "%s.%s.svc:%d" (include "produce-proxy.fullname" .) .Release.Namespace $port) -}}
{{- end -}}
{{- $config = mergeOverwrite $config (dict "listener" $listener) -}}
{{- end -}}
{{- if and (include "produce-proxy.spool.volume" .) (not (dig "spool" "dir" "" $config)) -}}
{{- $config = mergeOverwrite $config (dict "spool" (dict "dir" (printf "%s/spool" (trimSuffix "/" .Values.spool.mountPath)))) -}}
{{- end -}}
{{- toJson $config -}}
{{- end }}

{{/*
The spool's volume kind (spool.volume), "" when none: emptyDir or
persistentVolumeClaim. Values from before the spool existed have no spool key.
*/}}
{{- define "produce-proxy.spool.volume" -}}
{{- $volume := dig "volume" "none" (.Values.spool | default dict) -}}
{{- if ne $volume "none" }}{{ $volume }}{{ end -}}
{{- end }}

{{/*
The spool's PVC: spool.persistentVolumeClaim.existingClaim, or the one the
chart creates (templates/spool-pvc.yaml), named after the release.
*/}}
{{- define "produce-proxy.spool.claimName" -}}
{{- .Values.spool.persistentVolumeClaim.existingClaim | default (printf "%s-spool" (include "produce-proxy.sidecar.configMapName" .) | trunc 63 | trimSuffix "-") -}}
{{- end }}

{{/*
The metrics port, taken from config.metrics.address so the probes, the
annotations and the PodMonitor can never disagree with the proxy.
*/}}
{{- define "produce-proxy.metricsPort" -}}
{{- $address := dig "metrics" "address" "127.0.0.1:9464" .Values.config -}}
{{- $port := splitList ":" $address | last -}}
{{- if not (regexMatch "^[0-9]+$" $port) -}}
{{- fail (printf "config.metrics.address %q is not host:port" $address) -}}
{{- end -}}
{{- $port -}}
{{- end }}

{{- define "produce-proxy.drainTimeoutMs" -}}
{{- dig "shutdown" "drain_timeout_ms" 30000 .Values.config | int64 -}}
{{- end }}

{{/*
The whole drain, rounded up to seconds, plus a margin for the app's own
shutdown (native mode stops the sidecar after the app) and the last flush.
*/}}
{{- define "produce-proxy.terminationGracePeriodSeconds" -}}
{{- $drainMs := include "produce-proxy.drainTimeoutMs" . | int64 -}}
{{- add (div (add $drainMs 999) 1000) (.Values.terminationGraceMarginSeconds | int64) -}}
{{- end }}

{{/*
Fails the render on values the proxy or Kubernetes would refuse later, with a
message that says which value to change.
*/}}
{{- define "produce-proxy.validate" -}}
{{- $mode := .Values.sidecar.mode -}}
{{- if not (has $mode (list "native" "container")) -}}
{{- fail (printf "sidecar.mode must be native or container, not %q" $mode) -}}
{{- end -}}
{{- if and (eq $mode "native") (semverCompare "<1.29.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "sidecar.mode=native needs Kubernetes 1.29+ (this is %s); use sidecar.mode=container" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- if not (dig "upstream" "bootstrap_servers" list .Values.config) -}}
{{- fail "config.upstream.bootstrap_servers is required: the Kafka cluster's [\"host:port\", ...]" -}}
{{- end -}}
{{- /* No open relay: the proxy's own rule (config/client_access.h), checked at render time. */ -}}
{{- $config := include "produce-proxy.config" . | fromJson -}}
{{- $listener := dig "listener" "address" "127.0.0.1:9092" $config -}}
{{- $mtls := and (dig "listener" "tls" "enabled" false $config) (eq (dig "listener" "tls" "client_auth" "none" $config) "required") -}}
{{- $sasl := dig "listener" "sasl" "mechanisms" list $config -}}
{{- if and (not (regexMatch "^((?i)localhost|127\\.[0-9]+\\.[0-9]+\\.[0-9]+|\\[::1\\]):[0-9]+$" $listener)) (not $mtls) (not $sasl) (not (dig "listener" "allow_unauthenticated" false $config)) -}}
{{- fail (printf "config.listener.address %q is not loopback and clients are not authenticated: an open relay under the proxy's upstream identity; require client certificates (config.listener.tls.enabled=true, client_auth=required) or SASL (config.listener.sasl.mechanisms), keep it on 127.0.0.1, or set config.listener.allow_unauthenticated=true where a NetworkPolicy restricts who reaches the port" $listener) -}}
{{- end -}}
{{- if include "produce-proxy.node.enabled" . -}}
{{- if not (has .Values.node.expose (list "hostPort" "service")) -}}
{{- fail (printf "node.expose must be hostPort or service, not %q" .Values.node.expose) -}}
{{- end -}}
{{- if and (or $mtls $sasl (dig "listener" "tls" "enabled" false $config)) (not .Values.node.clientAuthSecret.name) -}}
{{- fail "node.clientAuthSecret.name is empty: the listener's TLS files and users file come from that Secret (keys tls.crt, tls.key, ca.crt, users), mounted at node.clientAuthSecret.mountPath" -}}
{{- end -}}
{{- end -}}
{{- $spool := include "produce-proxy.spool.volume" . -}}
{{- if and $spool (include "produce-proxy.node.enabled" .) -}}
{{- fail (printf "spool.volume=%s: node mode has no spool volume; set spool.volume=none" $spool) -}}
{{- end -}}
{{- if and (eq $spool "persistentVolumeClaim") (ne (int .Values.replicaCount) 1) -}}
{{- fail (printf "spool.volume=persistentVolumeClaim needs replicaCount 1, not %d: a spool has one writer, and the replicas would share the claim" (int .Values.replicaCount)) -}}
{{- end -}}
{{- if and $spool (not (has $spool (list "emptyDir" "persistentVolumeClaim"))) -}}
{{- fail (printf "spool.volume must be none, emptyDir or persistentVolumeClaim, not %q" $spool) -}}
{{- end -}}
{{- $metrics := dig "metrics" "address" "127.0.0.1:9464" .Values.config -}}
{{- if or (hasPrefix "127." $metrics) (hasPrefix "localhost:" $metrics) (hasPrefix "[::1]" $metrics) -}}
{{- fail (printf "config.metrics.address %q is loopback: the kubelet probes and Prometheus reach the pod IP, so bind 0.0.0.0" $metrics) -}}
{{- end -}}
{{- end }}
