{{/*
The Job spec shared by the CronJob and the export Job. Call with
(dict "ctx" $ "backoffLimit" N "activeDeadlineSeconds" N "ttl" N-or-nil
"envOverrides" DICT-or-nil).
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
      {{- /* The labels selectors, the anti-affinity and the logs command match are not overridable; the other chart labels are. */}}
      {{- $labels := include "kse.podLabels" $ | fromYaml }}
      {{- $owned := include "kse.selectorLabels" $ | fromYaml | keys }}
      {{- with .selector }}
      {{- $labels = merge (fromYaml .) $labels }}
      {{- $owned = concat $owned (keys (fromYaml .)) }}
      {{- end }}
      {{- include "kse.mergeMeta" (dict "chart" $labels "user" $.Values.podLabels "owned" $owned "where" "podLabels") | nindent 6 }}
    annotations:
      {{- $chart := dict "checksum/config" (include "kse.checksum" $) }}
      {{- include "kse.mergeMeta" (dict "chart" $chart "user" $.Values.podAnnotations "owned" (keys $chart) "where" "podAnnotations") | nindent 6 }}
  spec:
    {{- include "kse.podSpec" (dict "ctx" $ "envOverrides" .envOverrides) | nindent 4 }}
{{- end }}

{{- /* Call with (dict "ctx" $ "envOverrides" DICT-or-nil): see kse.envFor. */}}
{{- define "kse.podSpec" -}}
{{- $envOverrides := .envOverrides | default dict }}
{{- with .ctx }}
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
      {{- include "kse.envFor" (dict "ctx" . "overrides" $envOverrides) | trim | nindent 6 }}
      {{- if .Values.exporter.pushgatewayUrl }}
      {{- /* One run label per Job: its pod retries push as the same scheduled run. */}}
      - name: RUN_ID
        valueFrom:
          fieldRef:
            fieldPath: metadata.labels['batch.kubernetes.io/job-name']
      {{- end }}
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
      {{- if .Values.exporter.httpHeadersExistingSecret.name }}
      - name: http-headers
        mountPath: {{ include "kse.httpHeadersDir" . }}
        readOnly: true
      {{- end }}
      {{- if .Values.exporter.objectStoreExistingSecret.name }}
      - name: object-store
        mountPath: {{ include "kse.objectStoreDir" . }}
        readOnly: true
      {{- end }}
      {{- if .Values.exporter.clusterMapConfigMap.name }}
      - name: cluster-map
        mountPath: {{ include "kse.clusterMapDir" . }}
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
  {{- with .Values.exporter.httpHeadersExistingSecret }}
  {{- if .name }}
  - name: http-headers
    secret:
      secretName: {{ .name }}
      defaultMode: 0440
      items:
        - key: {{ .key }}
          path: {{ .key }}
  {{- end }}
  {{- end }}
  {{- with .Values.exporter.objectStoreExistingSecret }}
  {{- if .name }}
  {{- /* It may hold keys: readable by the pod's group only, like the token. */}}
  - name: object-store
    secret:
      secretName: {{ .name }}
      defaultMode: 0440
      items:
        - key: {{ .key }}
          path: {{ .key }}
  {{- end }}
  {{- end }}
  {{- with .Values.exporter.clusterMapConfigMap }}
  {{- if .name }}
  - name: cluster-map
    configMap:
      name: {{ .name }}
      defaultMode: 0444
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
{{- with include "kse.affinity" . | fromYaml }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/*
.Values.affinity plus, with exclusiveRuns.enabled, a required pod
anti-affinity against the release's other export pods over a topology key
every node shares: the scheduler then starts no export pod (scheduled run,
install-time export, or its replacement) while another one is running.
Finished pods do not count; the scheduler ignores them.
*/}}
{{- define "kse.affinity" -}}
{{- $aff := deepCopy (.Values.affinity | default dict) }}
{{- if .Values.exclusiveRuns.enabled }}
{{- $term := dict "labelSelector" (dict "matchLabels" (include "kse.selectorLabels" . | fromYaml)) "topologyKey" .Values.exclusiveRuns.topologyKey }}
{{- $anti := get $aff "podAntiAffinity" | default dict }}
{{- $required := get $anti "requiredDuringSchedulingIgnoredDuringExecution" | default list }}
{{- $_ := set $anti "requiredDuringSchedulingIgnoredDuringExecution" (append $required $term) }}
{{- $_ := set $aff "podAntiAffinity" $anti }}
{{- end }}
{{- toYaml $aff }}
{{- end }}
