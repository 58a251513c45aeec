{{/*
The exporter's defaults (exporter/config/config.go). A variable whose value
equals its default is not rendered; chart_test.go checks this table against
config.Vars().
*/}}
{{- define "kse.exporterDefaults" -}}
FAIL_ON_UNMAPPED_CLUSTERS: "false"
KUBECOST_CLUSTER_FILTER: v2
KUBECOST_NAMESPACE: kubecost
KUBECOST_RELEASE: kubecost
KUBECOST_API_FLAVOR: kubecost
BACKFILL_PERIOD_DAYS: "15"
SETTLE_HOURS: "48"
BACKFILL_ALL_AVAILABLE: "false"
BACKFILL_MAX_DAYS: "400"
AGGREGATION: container
GRANULARITY: daily
KUBECOST_ALLOCATION_API_PAGINATE: "false"
CONNECTION_TIMEOUT: "10"
KUBECOST_ALLOCATION_API_READ_TIMEOUT: "60"
TLS_VERIFY: "true"
KUBECOST_MAX_RETRIES: "4"
MAX_VALUE_BYTES: "2097152"
S3_PART_SIZE_MIB: "8"
S3_REQUEST_TIMEOUT: "60"
COMPRESSION: snappy
CONCURRENCY: "1"
MAX_CLUSTER_DAYS_PER_RUN: "0"
RUN_BUDGET: "0"
DRY_RUN: "false"
REEXPORT_ON_CONFIG_CHANGE: "true"
DRIFT_TOLERANCE: 0.1%
REEXPORT_LEGACY: "false"
LOG_LEVEL: info
LOG_FORMAT: auto
{{- end }}

{{/* Fails with a clear message on what the schema cannot express. */}}
{{- define "kse.validate" -}}
{{- $e := .Values.exporter }}
{{- $clusterSources := list }}
{{- if $e.clusterId }}{{ $clusterSources = append $clusterSources "exporter.clusterId" }}{{ end }}
{{- if $e.clusterArns }}{{ $clusterSources = append $clusterSources "exporter.clusterArns" }}{{ end }}
{{- if $e.clusterMapConfigMap.name }}{{ $clusterSources = append $clusterSources "exporter.clusterMapConfigMap.name" }}{{ end }}
{{- if eq (len $clusterSources) 0 }}
{{- fail "exporter.clusterId is required: the EKS cluster ARN, e.g. arn:aws:eks:us-east-1:111122223333:cluster/my-cluster (or, for a federated Kubecost, exporter.clusterArns or exporter.clusterMapConfigMap.name)" }}
{{- end }}
{{- if gt (len $clusterSources) 1 }}
{{- fail (printf "set one of exporter.clusterId, exporter.clusterArns and exporter.clusterMapConfigMap.name, not %s" (join " and " $clusterSources)) }}
{{- end }}
{{- include "kse.validateClusterArns" . }}
{{- if and (eq $e.clusterFilter "v1") (eq $e.kubecostApiFlavor "opencost") }}
{{- fail "exporter.clusterFilter v1 (filterClusters) is not read by OpenCost: use v2 with exporter.kubecostApiFlavor opencost" }}
{{- end }}
{{- if and (not $e.kubecostApiEndpoint) (ne $e.kubecostApiFlavor "kubecost") }}
{{- fail (printf "exporter.kubecostApiEndpoint is required with exporter.kubecostApiFlavor %s: only a Kubecost frontend (flavour kubecost) is found without it" $e.kubecostApiFlavor) }}
{{- end }}
{{- if not (or $e.outputDir $e.objectStoreExistingSecret.name) }}
{{- $_ := required "exporter.s3BucketName is required (unless exporter.outputDir or exporter.objectStoreExistingSecret.name is set): the destination S3 bucket" $e.s3BucketName }}
{{- end }}
{{- if and $e.irsaParentRoleArn $e.clusterId }}
{{- $rolePart := regexReplaceAll "^arn:([^:]+):.*$" $e.irsaParentRoleArn "${1}" }}
{{- $clusterPart := regexReplaceAll "^arn:([^:]+):.*$" $e.clusterId "${1}" }}
{{- if ne $rolePart $clusterPart }}
{{- fail (printf "exporter.irsaParentRoleArn is in partition %q but exporter.clusterId in %q: roles cannot be assumed across partitions" $rolePart $clusterPart) }}
{{- end }}
{{- end }}
{{- $sources := list }}
{{- if $e.bearerTokenFile }}{{ $sources = append $sources "exporter.bearerTokenFile" }}{{ end }}
{{- if $e.bearerTokenSecretName }}{{ $sources = append $sources "exporter.bearerTokenSecretName" }}{{ end }}
{{- if $e.bearerTokenExistingSecret.name }}{{ $sources = append $sources "exporter.bearerTokenExistingSecret.name" }}{{ end }}
{{- if gt (len $sources) 1 }}
{{- fail (printf "set only one Kubecost bearer token source, not %s" (join " and " $sources)) }}
{{- end }}
{{- range $list := list "labels" "annotations" }}
{{- range (get $e $list) }}
{{- if and (contains "/" .) (gt (len (first (splitList "/" .))) 253) }}
{{- fail (printf "exporter.%s: %q has a prefix longer than 253 characters" $list .) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $e.forceDates }}
{{- if not (regexMatch "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" .) }}
{{- fail (printf "exporter.forceDates: %q is not a YYYY-MM-DD date" .) }}
{{- end }}
{{- $_ := mustToDate "2006-01-02" . }}
{{- end }}
{{- $owned := concat (include "kse.env" . | fromYamlArray) (include "kse.envFor" (dict "ctx" . "overrides" (include "kse.exportJobEnv" . | fromYaml)) | fromYamlArray) }}
{{- include "kse.validateRunBudget" (dict "where" "exporter.runBudget" "value" $e.runBudget) }}
{{- include "kse.validateRunBudget" (dict "where" "exportJob.runBudget" "value" .Values.exportJob.runBudget "deadline" .Values.exportJob.activeDeadlineSeconds "deadlineWhere" "exportJob.activeDeadlineSeconds") }}
{{- range .Values.extraEnv }}
{{- $name := .name }}
{{- range $owned }}
{{- if eq .name $name }}
{{- fail (printf "extraEnv sets %s, which the chart already renders from a typed value under exporter; set that value instead" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The exporter's environment, as a YAML list of {name, value}, in the order of
config.Vars(). Optional values are rendered when set, defaulted ones when
they differ from the exporter's default.
*/}}
{{- define "kse.env" -}}
{{- include "kse.envFor" (dict "ctx" . "overrides" dict) }}
{{- end }}

{{/*
kse.env with some exporter values replaced for one Job: call with
(dict "ctx" $ "overrides" DICT), DICT keyed like exporter (the export
Job's, kse.exportJobEnv).
*/}}
{{- define "kse.envFor" -}}
{{- $ctx := .ctx }}
{{- $e := merge (deepCopy .overrides) $ctx.Values.exporter }}
{{- $defaults := include "kse.exporterDefaults" $ctx | fromYaml }}
{{- $bearerFile := $e.bearerTokenFile }}
{{- if $e.bearerTokenExistingSecret.name }}
{{- $bearerFile = printf "%s/%s" (include "kse.bearerTokenDir" $ctx) $e.bearerTokenExistingSecret.key }}
{{- end }}
{{- $headersFile := "" }}
{{- if $e.httpHeadersExistingSecret.name }}
{{- $headersFile = printf "%s/%s" (include "kse.httpHeadersDir" $ctx) $e.httpHeadersExistingSecret.key }}
{{- end }}
{{- $vars := list
  (list "S3_BUCKET_NAME" $e.s3BucketName)
  (list "OBJECT_STORE_CONFIG_FILE" (include "kse.objectStoreFile" $ctx))
  (list "S3_PREFIX" $e.s3Prefix)
  (list "CLUSTER_ID" $e.clusterId)
  (list "CLUSTER_ARNS" (include "kse.clusterArns" $ctx))
  (list "CLUSTER_MAP_FILE" (include "kse.clusterMapFile" $ctx))
  (list "FAIL_ON_UNMAPPED_CLUSTERS" $e.failOnUnmappedClusters)
  (list "KUBECOST_CLUSTER_FILTER" $e.clusterFilter)
  (list "KUBECOST_API_ENDPOINT" $e.kubecostApiEndpoint)
  (list "KUBECOST_NAMESPACE" $e.kubecostNamespace)
  (list "KUBECOST_RELEASE" $e.kubecostRelease)
  (list "KUBECOST_API_FLAVOR" $e.kubecostApiFlavor)
  (list "KUBECOST_API_PATH" $e.kubecostApiPath)
  (list "BACKFILL_PERIOD_DAYS" $e.backfillPeriodDays)
  (list "SETTLE_HOURS" $e.settleHours)
  (list "AGGREGATION" $e.aggregation)
  (list "GRANULARITY" $e.granularity)
  (list "KUBECOST_ALLOCATION_API_PAGINATE" $e.paginate)
  (list "CONNECTION_TIMEOUT" $e.connectionTimeout)
  (list "KUBECOST_ALLOCATION_API_READ_TIMEOUT" $e.readTimeout)
  (list "TLS_VERIFY" $e.tlsVerify)
  (list "KUBECOST_MAX_RETRIES" $e.maxRetries)
  (list "MAX_VALUE_BYTES" (int64 $e.maxValueBytes))
  (list "BACKFILL_ALL_AVAILABLE" $e.backfillAllAvailable)
  (list "BACKFILL_MAX_DAYS" $e.backfillMaxDays)
  (list "KUBECOST_CA_CERTIFICATE_SECRET_NAME" $e.caCertificateSecretName)
  (list "KUBECOST_CA_CERTIFICATE_SECRET_REGION" $e.caCertificateSecretRegion)
  (list "KUBECOST_BEARER_TOKEN_FILE" $bearerFile)
  (list "KUBECOST_BEARER_TOKEN_SECRET_NAME" $e.bearerTokenSecretName)
  (list "KUBECOST_HTTP_HEADERS_FILE" $headersFile)
  (list "IRSA_PARENT_IAM_ROLE_ARN" $e.irsaParentRoleArn)
  (list "S3_EXPECTED_BUCKET_OWNER" $e.expectedBucketOwner)
  (list "S3_SSE" $e.sse)
  (list "S3_SSE_KMS_KEY_ID" $e.sseKmsKeyId)
  (list "S3_PART_SIZE_MIB" $e.s3PartSizeMiB)
  (list "S3_REQUEST_TIMEOUT" $e.s3RequestTimeout)
  (list "LABELS" (join ", " $e.labels))
  (list "ANNOTATIONS" (join ", " $e.annotations))
  (list "OUTPUT_DIR" $e.outputDir)
  (list "COMPRESSION" $e.compression)
  (list "CONCURRENCY" $e.concurrency)
  (list "DRY_RUN" $e.dryRun)
  (list "FORCE_DATES" (join "," $e.forceDates))
  (list "MAX_CLUSTER_DAYS_PER_RUN" (int64 $e.maxClusterDaysPerRun))
  (list "RUN_BUDGET" $e.runBudget)
  (list "REEXPORT_ON_CONFIG_CHANGE" $e.reexportOnConfigChange)
  (list "DRIFT_TOLERANCE" $e.driftTolerance)
  (list "REEXPORT_LEGACY" $e.reexportLegacy)
  (list "LOG_LEVEL" $e.logLevel)
  (list "LOG_FORMAT" $e.logFormat)
  (list "PUSHGATEWAY_URL" $e.pushgatewayUrl)
}}
{{- range $vars }}
{{- $name := index . 0 }}
{{- $value := toString (index . 1) }}
{{- if and (ne $value "") (ne $value "<nil>") (ne $value (get $defaults $name)) }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* CLUSTER_ARNS: exporter.clusterArns as id=arn pairs, sorted by id. */}}
{{- define "kse.clusterArns" -}}
{{- $m := .Values.exporter.clusterArns }}
{{- $pairs := list }}
{{- range $id := keys $m | sortAlpha }}
{{- $pairs = append $pairs (printf "%s=%s" $id (get $m $id)) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* OBJECT_STORE_CONFIG_FILE: where the existing Secret's key is mounted. */}}
{{- define "kse.objectStoreDir" -}}/etc/kubecost-s3-exporter/object-store{{- end }}
{{- define "kse.objectStoreFile" -}}
{{- with .Values.exporter.objectStoreExistingSecret }}{{ if .name }}{{ include "kse.objectStoreDir" $ }}/{{ .key }}{{ end }}{{ end }}
{{- end }}

{{/* CLUSTER_MAP_FILE: where the existing ConfigMap's key is mounted. */}}
{{- define "kse.clusterMapDir" -}}/etc/kubecost-s3-exporter/cluster-map{{- end }}
{{- define "kse.clusterMapFile" -}}
{{- with .Values.exporter.clusterMapConfigMap }}{{ if .name }}{{ include "kse.clusterMapDir" $ }}/{{ .key }}{{ end }}{{ end }}
{{- end }}

{{/*
What the exporter checks of the map beyond the schema: no ARN twice, one
partition, and a bucket owner when the clusters are in several accounts
and no parent role says which account owns the bucket.
*/}}
{{- define "kse.validateClusterArns" -}}
{{- $e := .Values.exporter }}
{{- $seen := dict }}
{{- $accounts := dict }}
{{- $partitions := dict }}
{{- range $id := keys $e.clusterArns | sortAlpha }}
{{- $arn := get $e.clusterArns $id }}
{{- if hasKey $seen $arn }}
{{- fail (printf "exporter.clusterArns: clusters %q and %q have the same ARN %s" (get $seen $arn) $id $arn) }}
{{- end }}
{{- $_ := set $seen $arn $id }}
{{- $parts := splitList ":" $arn }}
{{- if ge (len $parts) 5 }}
{{- $_ := set $partitions (index $parts 1) true }}
{{- $_ := set $accounts (index $parts 4) true }}
{{- end }}
{{- end }}
{{- if gt (len $partitions) 1 }}
{{- fail (printf "exporter.clusterArns: the clusters are in several partitions (%s): one exporter writes one partition" (keys $partitions | sortAlpha | join ", ")) }}
{{- end }}
{{- if and (gt (len $accounts) 1) $e.s3BucketName (not $e.expectedBucketOwner) (not $e.irsaParentRoleArn) }}
{{- fail (printf "exporter.expectedBucketOwner is required when the clusters are in several accounts (%s) and exporter.irsaParentRoleArn is unset: the 12-digit account that owns the bucket, or disabled" (keys $accounts | sortAlpha | join ", ")) }}
{{- end }}
{{- end }}

{{/*
The exporter values the export Job replaces: BACKFILL_ALL_AVAILABLE (the
first export takes every day the server still holds) and its own
RUN_BUDGET, below its activeDeadlineSeconds, so that a long backfill ends
cleanly and the daily runs go on with it. As YAML keyed like exporter.
*/}}
{{- define "kse.exportJobEnv" -}}
{{- with .Values.exportJob }}
{{- if .allAvailable }}
backfillAllAvailable: true
{{- end }}
{{- with .runBudget }}
runBudget: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
RUN_BUDGET's upper bound (168h), which the schema's pattern cannot say,
and, given a deadline in seconds, that the budget ends the run before it.
Call with (dict "where" "value path" "value" V ["deadline" N "deadlineWhere" "value path"]).
*/}}
{{- define "kse.validateRunBudget" -}}
{{- $v := toString .value }}
{{- if and $v (ne $v "<nil>") }}
{{- $secs := 0 }}
{{- range $unit, $n := dict "h" 3600 "m" 60 "s" 1 }}
{{- $part := regexFind (printf "[0-9]+%s" $unit) $v | trimSuffix $unit }}
{{- if $part }}{{ $secs = add $secs (mul (atoi $part) $n) }}{{ end }}
{{- end }}
{{- if gt (int64 $secs) 604800 }}
{{- fail (printf "%s: %q is longer than 168h" .where $v) }}
{{- end }}
{{- if and .deadline (ge (int64 $secs) (int64 .deadline)) }}
{{- fail (printf "%s: %q must be shorter than %s (%d seconds), so that a long backfill ends cleanly before the deadline kills it" .where $v .deadlineWhere (int64 .deadline)) }}
{{- end }}
{{- end }}
{{- end }}
