{{/*
The sidecar, as templates any chart can include into its own pod spec. This
chart's own Deployment and ConfigMap are rendered by these same templates, so a
parent chart's pod gets exactly the sidecar this chart's pod gets.

Each template takes a context with:
  Values        this chart's values (values.yaml's shape). In a parent chart
                that declares this chart as a dependency with alias
                produceProxy, .Values.produceProxy: helm fills it with this
                chart's defaults under the parent's overrides.
  Release       the parent's .Release (the ConfigMap is named after it).
  Capabilities  the parent's .Capabilities (native mode needs Kubernetes 1.29+).
  Chart         optional: this chart (.Subcharts.produceProxy.Chart in a
                parent); its appVersion is the image tag when
                sidecar.image.tag is empty. Without it the tag must be set.
A parent passes
  (dict "Values" .Values.produceProxy "Release" .Release
        "Capabilities" .Capabilities "Chart" .Subcharts.produceProxy.Chart)
or the dependency's whole context, .Subcharts.produceProxy.

  produce-proxy.sidecar.container         the container, one list item
  produce-proxy.sidecar.native            "true" when that item belongs under
                                          initContainers (sidecar.mode native),
                                          "" when under containers
  produce-proxy.sidecar.volumes           the pod volumes it mounts, list items
                                          (the spool's emptyDir or PVC with
                                          spool.volume; a PVC the chart does
                                          not create must exist: existingClaim)
  produce-proxy.sidecar.configmap         the ConfigMap holding produce-proxy.toml
  produce-proxy.sidecar.configMapName     that ConfigMap's name
  produce-proxy.sidecar.podAnnotations    checksum/config (a config change rolls
                                          the pods) and prometheus.io/*
  produce-proxy.sidecar.terminationGracePeriodSeconds
                                          at least the drain, for the pod spec
  produce-proxy.sidecar.bootstrapServers  where the app's client connects

helm/examples/parent-chart is a parent chart using them; this chart renders the
ConfigMap itself when it is a dependency (deployment.enabled: false turns off
only its own Deployment).
*/}}

{{- define "produce-proxy.sidecar.native" -}}
{{- if eq .Values.sidecar.mode "native" }}true{{ end -}}
{{- end }}

{{/*
Named after the release, not the chart: an alias such as produceProxy would
make the chart's name an invalid object name.
*/}}
{{- define "produce-proxy.sidecar.configMapName" -}}
{{- if contains "produce-proxy" .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-produce-proxy" .Release.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "produce-proxy.sidecar.image" -}}
{{- $tag := .Values.sidecar.image.tag -}}
{{- if and (not $tag) .Chart -}}
{{- $tag = .Chart.AppVersion -}}
{{- end -}}
{{- if not $tag -}}
{{- fail "sidecar.image.tag is empty and the context has no Chart to take appVersion from: pass \"Chart\" .Subcharts.produceProxy.Chart or set sidecar.image.tag" -}}
{{- end -}}
{{- printf "%s:%s" .Values.sidecar.image.repository $tag -}}
{{- end }}

{{- define "produce-proxy.sidecar.bootstrapServers" -}}
{{- dig "listener" "address" "127.0.0.1:9092" .Values.config -}}
{{- end }}

{{- define "produce-proxy.sidecar.terminationGracePeriodSeconds" -}}
{{- include "produce-proxy.terminationGracePeriodSeconds" . -}}
{{- end }}

{{- define "produce-proxy.sidecar.podAnnotations" -}}
# A config change rolls the pods: the proxy reads its file at start.
checksum/config: {{ include "produce-proxy.configToml" . | sha256sum }}
{{- if .Values.metrics.annotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ include "produce-proxy.metricsPort" . | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end }}

{{- define "produce-proxy.sidecar.configmap" -}}
{{- include "produce-proxy.validate" . -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "produce-proxy.sidecar.configMapName" . }}
  labels:
    {{- if .Chart }}
    helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
    {{- end }}
    app.kubernetes.io/name: produce-proxy
    app.kubernetes.io/instance: {{ .Release.Name }}
    {{- if .Chart }}
    app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
    {{- end }}
    app.kubernetes.io/managed-by: {{ .Release.Service }}
data:
  produce-proxy.toml: |
    {{- include "produce-proxy.configToml" . | nindent 4 }}
{{- end }}

{{/*
The sidecar container: an init container with restartPolicy Always in native
mode (Kubernetes 1.29+), else a plain container with a preStop wait.
*/}}
{{- define "produce-proxy.sidecar.container" -}}
{{- include "produce-proxy.validate" . -}}
{{- $v := .Values.sidecar -}}
{{- $native := include "produce-proxy.sidecar.native" . -}}
- name: produce-proxy
  image: {{ include "produce-proxy.sidecar.image" . | quote }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  {{- if $native }}
  # A native sidecar (KEP-753): started before the app, stopped after it.
  restartPolicy: Always
  {{- end }}
  args:
    - --config
    - /etc/produce-proxy/produce-proxy.toml
    {{- range $v.extraArgs }}
    - {{ . | quote }}
    {{- end }}
  ports:
    - name: metrics
      containerPort: {{ include "produce-proxy.metricsPort" . }}
      protocol: TCP
  {{- if $native }}
  startupProbe:
    httpGet:
      path: /readyz
      port: metrics
    periodSeconds: {{ $v.startupProbe.periodSeconds }}
    failureThreshold: {{ $v.startupProbe.failureThreshold }}
  {{- end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: metrics
    {{- toYaml $v.livenessProbe | nindent 4 }}
  readinessProbe:
    httpGet:
      path: /readyz
      port: metrics
    {{- toYaml $v.readinessProbe | nindent 4 }}
  {{- if and (not $native) $v.preStopSleepSeconds }}
  lifecycle:
    # Both containers get SIGTERM at once in this mode: wait so the app's
    # last records reach the proxy before it stops accepting.
    preStop:
      exec:
        command: ["sleep", {{ $v.preStopSleepSeconds | quote }}]
  {{- end }}
  resources:
    {{- toYaml $v.resources | nindent 4 }}
  securityContext:
    {{- toYaml $v.securityContext | nindent 4 }}
  volumeMounts:
    - name: produce-proxy-config
      mountPath: /etc/produce-proxy
      readOnly: true
    {{- if .Values.tls.secretName }}
    - name: produce-proxy-tls
      mountPath: {{ .Values.tls.mountPath }}
      readOnly: true
    {{- end }}
    {{- if .Values.saslSecret.name }}
    - name: produce-proxy-sasl
      mountPath: {{ .Values.saslSecret.mountPath }}
      readOnly: true
    {{- end }}
    {{- if include "produce-proxy.spool.volume" . }}
    # The durable spool (config.spool.dir below it); see values.yaml, spool.
    - name: produce-proxy-spool
      mountPath: {{ .Values.spool.mountPath }}
    {{- end }}
{{- end }}

{{- define "produce-proxy.sidecar.volumes" -}}
- name: produce-proxy-config
  configMap:
    name: {{ include "produce-proxy.sidecar.configMapName" . }}
{{- if .Values.tls.secretName }}
- name: produce-proxy-tls
  secret:
    secretName: {{ .Values.tls.secretName }}
    defaultMode: 0440
{{- end }}
{{- if .Values.saslSecret.name }}
- name: produce-proxy-sasl
  secret:
    secretName: {{ .Values.saslSecret.name }}
{{- end }}
{{- $spool := include "produce-proxy.spool.volume" . }}
{{- if eq $spool "emptyDir" }}
# Kept across container restarts and kill -9; gone with the pod.
- name: produce-proxy-spool
  emptyDir:
    {{- if .Values.spool.emptyDir.sizeLimit }}
    sizeLimit: {{ .Values.spool.emptyDir.sizeLimit }}
    {{- else }}
    {}
    {{- end }}
{{- else if eq $spool "persistentVolumeClaim" }}
# Kept across pod deletion and rescheduling, as long as the claim is.
- name: produce-proxy-spool
  persistentVolumeClaim:
    claimName: {{ include "produce-proxy.spool.claimName" . }}
{{- end }}
{{- end }}
