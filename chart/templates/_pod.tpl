{{/*
The Job spec shared by the CronJob and the export Job. Call with
(dict "ctx" $ "backoffLimit" N "activeDeadlineSeconds" N "ttl" N-or-nil).
*/}}
{{- define "kse.jobSpec" -}}
{{- $ := .ctx }}
{{- if not (kindIs "invalid" .ttl) }}
ttlSecondsAfterFinished: {{ int64 .ttl }}
{{- end }}
backoffLimit: {{ int64 .backoffLimit }}
activeDeadlineSeconds: {{ int64 .activeDeadlineSeconds }}
{{- /* Exit status 2 is a configuration error: retrying cannot help. */}}
podFailurePolicy:
  rules:
    - action: FailJob
      onExitCodes:
        containerName: exporter
        operator: In
        values: [2]
template:
  metadata:
    labels:
      {{- include "kse.labels" $ | nindent 6 }}
      {{- with $.Values.podLabels }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    annotations:
      checksum/config: {{ include "kse.checksum" $ }}
      {{- with $.Values.podAnnotations }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
  spec:
    {{- include "kse.podSpec" $ | nindent 4 }}
{{- end }}

{{- define "kse.podSpec" -}}
restartPolicy: Never
serviceAccountName: {{ include "kse.serviceAccountName" . }}
{{- /* EKS's pod identity webhook projects the IRSA token itself. */}}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  {{- if kindIs "string" . }}
  - name: {{ . }}
  {{- else }}
  - name: {{ .name }}
  {{- end }}
  {{- end }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: exporter
    image: {{ include "kse.image" . | quote }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    terminationMessagePolicy: FallbackToLogsOnError
    env:
      {{- include "kse.env" . | trim | nindent 6 }}
      {{- with .Values.extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- with .Values.extraEnvFrom }}
    envFrom:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.securityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    volumeMounts:
      - name: tmp
        mountPath: /tmp
      {{- if .Values.exporter.bearerTokenExistingSecret.name }}
      - name: bearer-token
        mountPath: {{ include "kse.bearerTokenDir" . }}
        readOnly: true
      {{- end }}
      {{- with .Values.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .Values.tmpSizeLimit }}
  {{- with .Values.exporter.bearerTokenExistingSecret }}
  {{- if .name }}
  - name: bearer-token
    secret:
      secretName: {{ .name }}
      defaultMode: 0440
      items:
        - key: {{ .key }}
          path: {{ .key }}
  {{- end }}
  {{- end }}
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
