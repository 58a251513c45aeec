{{/*
Names. Kubernetes names are at most 63 characters; a CronJob's at most 52,
because its Jobs get an 11-character suffix.
*/}}
{{- define "kse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kse.cronJobName" -}}
{{- include "kse.fullname" . | trunc 52 | trimSuffix "-" }}
{{- end }}

{{/*
<fullname>-export-<10 hex of kse.exportJobHash>: 45 + 8 + 10 = 63 characters
at most.
*/}}
{{- define "kse.exportJobName" -}}
{{- printf "%s-export-%s" (include "kse.fullname" . | trunc 45 | trimSuffix "-") (include "kse.exportJobHash" . | trunc 10) }}
{{- end }}

{{/*
The export Job's spec without the fields that may change in place (the TTL)
and without its own selector label. Call with (dict "ctx" $ "name" jobName);
an empty name leaves the selector label out.
*/}}
{{- define "kse.exportJobSpec" -}}
{{- $ := .ctx }}
{{- $selector := "" }}
{{- if .name }}
{{- $selector = printf "kubecost-s3-exporter/export-job: %s" .name }}
{{- end }}
{{- include "kse.jobSpec" (dict "ctx" $ "backoffLimit" $.Values.exportJob.backoffLimit "activeDeadlineSeconds" $.Values.exportJob.activeDeadlineSeconds "ttl" nil "selector" $selector) }}
{{- end }}

{{/*
The sha256 of the export Job's immutable spec (pod template, deadlines,
retries). A Job's pod template cannot change, so any change here must be a
new Job; with skipWhenUnchanged=false the revision makes every upgrade one.
*/}}
{{- define "kse.exportJobHash" -}}
{{- $spec := include "kse.exportJobSpec" (dict "ctx" . "name" "") }}
{{- if not .Values.exportJob.skipWhenUnchanged }}
{{- $spec = printf "%s\nrevision: %d" $spec .Release.Revision }}
{{- end }}
{{- $spec | sha256sum }}
{{- end }}

{{/* The export Job's selector: unique to this Job within the namespace. */}}
{{- define "kse.exportJobSelector" -}}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
kubecost-s3-exporter/export-job: {{ .name }}
{{- end }}

{{- define "kse.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kse.labels" -}}
helm.sh/chart: {{ include "kse.chart" . }}
{{ include "kse.podLabels" . }}
{{- end }}

{{/*
Pod labels: the chart version is left out, because the export Job's pod
template is immutable and a chart upgrade alone must not start an export.
*/}}
{{- define "kse.podLabels" -}}
{{ include "kse.selectorLabels" . }}
app.kubernetes.io/version: {{ include "kse.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: exporter
app.kubernetes.io/part-of: kubecost-s3-exporter
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "kse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kse.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kse.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{- define "kse.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "kse.imageTag" .) }}
{{- end }}
{{- end }}

{{/*
The sha256 of the configuration: the exporter's environment and the image.
Resources, scheduling and the schedule are not part of it, so changing them
does not trigger an export.
*/}}
{{- define "kse.checksum" -}}
{{- $cfg := dict "env" (include "kse.env" . | fromYamlArray) "extraEnv" .Values.extraEnv "extraEnvFrom" .Values.extraEnvFrom "image" (include "kse.image" .) }}
{{- toJson $cfg | sha256sum }}
{{- end }}

{{- define "kse.bearerTokenDir" -}}/var/run/secrets/kubecost-s3-exporter/bearer-token{{- end }}

{{/*
The cluster names the alerts cover, as a JSON list: CLUSTER_ID's, or the
names of exporter.clusterArns' ARNs. Empty with clusterMapConfigMap, whose
map the chart cannot read: the alerts then cover every cluster of the job.
A cluster removed from the map thus leaves the alerts with the next upgrade.
*/}}
{{- define "kse.alertClusters" -}}
{{- $e := .Values.exporter }}
{{- $arns := values $e.clusterArns }}
{{- if $e.clusterId }}{{ $arns = list $e.clusterId }}{{ end }}
{{- $names := list }}
{{- range $arns | sortAlpha }}
{{- $names = append $names (regexReplaceAll "^.*:cluster/" . "") }}
{{- end }}
{{- $names | uniq | sortAlpha | toJson }}
{{- end }}
