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

{{/* <fullname>-export-<10 hex>: 45 + 8 + 10 = 63 characters at most. */}}
{{- define "kse.exportJobName" -}}
{{- printf "%s-export-%s" (include "kse.fullname" . | trunc 45 | trimSuffix "-") (include "kse.checksum" . | trunc 10) }}
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
