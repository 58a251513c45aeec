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
{{- include "kse.jobSpec" (dict "ctx" $ "backoffLimit" $.Values.exportJob.backoffLimit "activeDeadlineSeconds" $.Values.exportJob.activeDeadlineSeconds "ttl" nil "selector" $selector "envOverrides" (include "kse.exportJobEnv" $ | fromYaml)) }}
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
{{- define "kse.httpHeadersDir" -}}/var/run/secrets/kubecost-s3-exporter/http-headers{{- end }}

{{/*
A map of metadata (annotations or labels) made of the chart's keys and the
user's, as sorted YAML, so a key is never written twice. Call with
(dict "chart" DICT "user" DICT "owned" LIST "where" "value path").
- A key in "owned" belongs to the chart (the checksums the upgrade logic
  reads, the labels selectors match): a user value for it fails the render.
- Any other key the chart sets (a default such as the ArgoCD sync wave) is
  overridden by the user's value.
Values are rendered as strings, as the API requires: `--set x=3` is "3";
a null user value is left out.
*/}}
{{- define "kse.mergeMeta" -}}
{{- $out := dict }}
{{- range $k, $v := .chart }}
{{- $_ := set $out $k (toString $v) }}
{{- end }}
{{- range $k, $v := .user }}
{{- if kindIs "invalid" $v }}{{ continue }}{{ end }}
{{- if has $k $.owned }}
{{- fail (printf "%s: %q is set by the chart and cannot be overridden" $.where $k) }}
{{- end }}
{{- $_ := set $out $k (toString $v) }}
{{- end }}
{{- if $out }}
{{- toYaml $out }}
{{- end }}
{{- end }}

{{/*
What this install or upgrade does with the export Job, for export-job.yaml
and NOTES.txt:
- "new": a Job of a new spec is rendered, so an export starts now;
- "kept": an upgrade with an unchanged spec while the Job still exists
  (running, or finished and not yet deleted by its TTL): it is rendered as
  it is and helm leaves it alone;
- "none": an upgrade with an unchanged spec after the TTL deleted the Job:
  nothing is rendered and no export starts.
*/}}
{{- define "kse.exportJobState" -}}
{{- $state := "new" }}
{{- if and .Release.IsUpgrade .Values.exportJob.skipWhenUnchanged }}
{{- $liveCron := lookup "batch/v1" "CronJob" .Release.Namespace (include "kse.cronJobName" .) | default dict }}
{{- if eq (dig "metadata" "annotations" "checksum/export-job" "" $liveCron) (include "kse.exportJobHash" .) }}
{{- $state = "none" }}
{{- if lookup "batch/v1" "Job" .Release.Namespace (include "kse.exportJobName" .) }}
{{- $state = "kept" }}
{{- end }}
{{- end }}
{{- end }}
{{- $state }}
{{- end }}

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
