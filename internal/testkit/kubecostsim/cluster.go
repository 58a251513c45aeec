package kubecostsim

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Everything random derives from splitmix64, whose output is fixed forever;
// math/rand streams may change between Go releases and break golden numbers.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

func hash(a, b uint64) uint64 { return mix(a ^ mix(b+0x9e3779b97f4a7c15)) }

// unit maps a hash to [0,1).
func unit(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s)
}

func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}

func (r *rng) float() float64        { return unit(r.next()) }
func (r *rng) chance(p float64) bool { return r.float() < p }

func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

type instanceType struct {
	name             string
	cpu, ramGiB, gpu int
	price            float64 // on-demand USD per hour
	arch             string
}

func instanceCatalog() (general, gpu []instanceType) {
	general = []instanceType{
		{"m5.large", 2, 8, 0, 0.096, "amd64"},
		{"m5.xlarge", 4, 16, 0, 0.192, "amd64"},
		{"m5.2xlarge", 8, 32, 0, 0.384, "amd64"},
		{"m5.4xlarge", 16, 64, 0, 0.768, "amd64"},
		{"m6i.2xlarge", 8, 32, 0, 0.384, "amd64"},
		{"m7i.4xlarge", 16, 64, 0, 0.8064, "amd64"},
		{"c5.2xlarge", 8, 16, 0, 0.34, "amd64"},
		{"r5.2xlarge", 8, 64, 0, 0.504, "amd64"},
		{"m6g.2xlarge", 8, 32, 0, 0.308, "arm64"},
		{"c7g.4xlarge", 16, 32, 0, 0.58, "arm64"},
	}
	gpu = []instanceType{
		{"g4dn.xlarge", 4, 16, 1, 0.526, "amd64"},
		{"g5.2xlarge", 8, 32, 1, 1.212, "amd64"},
		{"g5.12xlarge", 48, 192, 4, 5.672, "amd64"},
	}
	return general, gpu
}

type node struct {
	name, providerID   string
	cpu, ramBytes, gpu float64
	cpuPrice, ramPrice float64 // USD per core-hour and per byte-hour
	gpuPrice           float64 // USD per GPU-hour
	labels             []byte  // JSON object members, sanitized keys, no braces
	seed               uint64
	instanceType       string // the catalog's name, for the bill (cur.go)
	spot               bool   // its capacity type label says spot
}

type namespace struct {
	name                string
	labels, annotations []byte // JSON object members
}

type containerSpec struct {
	name             string
	cpuReq, ramReq   float64 // cores, bytes; 0 = no request
	gpu              float64
	cpuUtil, ramUtil float64 // typical usage relative to request
	netRate          float64 // bytes sent per hour
}

type controller struct {
	ns                  *namespace
	name, kind          string // kind "" for bare pods
	replicas            int    // slots, used to keep pod names unique
	containers          []containerSpec
	labels, annotations []byte // JSON object members; pod_template_hash is added per rollout
	services            []byte // JSON array or nil
	pvBytes             float64
	lbHourly            float64 // USD per pod-hour
	rolloutHours        int64   // deployments get a new pod-template-hash this often
	seed                uint64
}

// pattern says when a slot has a pod.
type pattern uint8

const (
	patContinuous pattern = iota // statefulsets and daemonsets: always, same pod
	patRolling                   // deployment replica: pods replaced every life hours
	patScaled                    // HPA replica: one pod per day during working hours
	patJob                       // cronjob: a short run every life hours
	patBare                      // pod without controller: some days, some hours
)

type slot struct {
	ctrl        *controller
	ordinal     int
	pat         pattern
	node        int32 // fixed node, or -1 to pick one per pod generation
	gpu         bool  // pick nodes among GPU nodes
	life, phase int64 // hours
	seed        uint64
	pvKey, pvID string // statefulset volume: Kubecost's PV key and the EBS volume id
}

type cluster struct {
	name, region string
	nameJSON     []byte // quoted
	nodes        []node
	cpuNodes     []int32 // general nodes, each repeated once per 2 vCPUs so bigger nodes get more pods
	gpuNodes     []int32
	namespaces   []*namespace
	slots        []slot
	diurnal      [24]float64
	podLabelKeys []string
	podAnnotKeys []string
}

// members renders key/value pairs as JSON object members with Kubecost's
// sanitized keys. Only used while building the cluster, so json.Marshal's
// speed does not matter.
func members(kv ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, SanitizeLabelKey(kv[i]))
		b = append(b, ':')
		b = appendQuoted(b, kv[i+1])
	}
	return b
}

func appendQuoted(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func hex16(x uint64) string { return fmt.Sprintf("%016x", x) }

// strHash is FNV-1a.
func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

func newCluster(cfg Config) *cluster {
	r := &rng{s: mix(uint64(cfg.Seed) ^ 0x6b756265636f7374)}
	c := &cluster{name: cfg.ClusterName, region: cfg.Region, nameJSON: appendQuoted(nil, cfg.ClusterName)}
	c.podLabelKeys = []string{"app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "team", "env", "version"}
	c.podAnnotKeys = []string{"prometheus.io/scrape", "prometheus.io/port", "kubernetes.io/change-cause", "description"}
	for h := range c.diurnal {
		// Busier during the (UTC) working day.
		c.diurnal[h] = 0.7 + 0.5*float64(12-abs(h-14))/12
	}
	c.buildNodes(r, cfg.Nodes)
	c.buildSystem(r)
	teams := []string{"platform", "payments", "growth", "data", "ml", "core", "web", "mobile"}
	base := []string{"payments", "checkout", "catalog", "search", "frontend", "identity", "orders",
		"inventory", "shipping", "notifications", "analytics", "data-pipeline", "ml-platform",
		"recommendations", "billing", "reporting", "gateway", "media", "messaging", "fraud"}
	gpuBudget := 0
	for _, i := range c.gpuNodes {
		gpuBudget += int(c.nodes[i].gpu)
	}
	for i := range cfg.Namespaces {
		name := base[i%len(base)]
		if i >= len(base) {
			name += "-" + strconv.Itoa(i/len(base)+1)
		}
		ns := &namespace{name: name}
		team, env := pick(r, teams), pick(r, []string{"prod", "prod", "staging", "dev"})
		kv := []string{"kubernetes.io/metadata.name", name, "team", team}
		if r.chance(0.8) {
			kv = append(kv, "env", env)
		}
		// What platform teams put on namespaces: about 10 labels in all.
		// Fixed values, so the random draws (and every other value) stay
		// as they were before these were added.
		kv = append(kv, "istio-injection", "enabled", "owner", team, "cost-center", "cc-"+team,
			"pod-security.kubernetes.io/enforce", "baseline", "backup", "daily", "tier", "tier-"+strconv.Itoa(i%3),
			"compliance", []string{"none", "pci", "sox"}[i%3], "region", cfg.Region)
		ns.labels = members(kv...)
		if r.chance(0.6) {
			ns.annotations = members("owner", team+"@example.com", "scheduler.alpha.kubernetes.io/node-selector", "")
		}
		c.namespaces = append(c.namespaces, ns)
		wantGPU := len(c.gpuNodes) > 0 && (i%6 == 5 || name == "ml-platform" || name == "recommendations")
		gpuBudget = c.buildWorkloads(r, ns, team, env, cfg, wantGPU, gpuBudget)
	}
	c.addIdleNodes(cfg.Seed, cfg.IdleNodes)
	return c
}

// addIdleNodes appends n nodes that no slot uses, after everything else
// was drawn, from a random stream of their own: the rest of the cluster
// stays exactly as it is without them.
func (c *cluster) addIdleNodes(seed int64, n int) {
	r := &rng{s: mix(uint64(seed) ^ 0x69646c656e6f6465)}
	general, _ := instanceCatalog()
	for i := range n {
		it := pick(r, general)
		name := fmt.Sprintf("ip-10-255-%d-%d.%s.compute.internal", i/250, 1+i%250, c.region)
		nd := node{name: name, providerID: "i-0" + hex16(r.next()), cpu: float64(it.cpu),
			ramBytes: float64(it.ramGiB) * (1 << 30), seed: r.next(), instanceType: it.name}
		wCPU, wRAM := float64(it.cpu)*0.031611, float64(it.ramGiB)*0.004237
		nd.cpuPrice = it.price * wCPU / (wCPU + wRAM) / float64(it.cpu)
		nd.ramPrice = it.price * wRAM / (wCPU + wRAM) / nd.ramBytes
		nd.labels = members("kubernetes.io/arch", it.arch, "kubernetes.io/os", "linux",
			"node.kubernetes.io/instance-type", it.name, "topology.kubernetes.io/region", c.region)
		c.nodes = append(c.nodes, nd)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (c *cluster) buildNodes(r *rng, n int) {
	general, gpuTypes := instanceCatalog()
	nGPU := 0
	if n >= 5 {
		nGPU = max(1, n/40)
	}
	suffix := ".ec2.internal"
	if c.region != "us-east-1" {
		suffix = "." + c.region + ".compute.internal"
	}
	zones := []string{c.region + "a", c.region + "b", c.region + "c"}
	amiSeed := r.next()
	ami := func(group string) string { return "ami-0" + hex16(hash(amiSeed, strHash(group))) }
	ipBase := r.intn(200)
	for i := 0; i < n; i++ {
		isGPU := i >= n-nGPU
		it := pick(r, general)
		if isGPU {
			it = pick(r, gpuTypes)
		}
		karpenter := r.chance(0.5)
		spot := r.chance(0.25)
		if karpenter {
			spot = r.chance(0.6)
		}
		zone := pick(r, zones)
		ip := ipBase + i/250
		name := fmt.Sprintf("ip-10-%d-%d-%d%s", ip/256, ip%256, 1+i%250, suffix)
		id := "i-0" + hex16(r.next())
		nd := node{name: name, providerID: id, cpu: float64(it.cpu), ramBytes: float64(it.ramGiB) * (1 << 30),
			gpu: float64(it.gpu), seed: r.next(), instanceType: it.name, spot: spot}
		if r.chance(0.3) {
			nd.providerID = "aws:///" + zone + "/" + id
		}
		price := it.price
		if spot {
			price *= 0.3 + 0.15*r.float()
		}
		// Split the node price the way Kubecost does: by the default relative
		// prices of a vCPU, a GiB of RAM and a GPU.
		wCPU, wRAM, wGPU := float64(it.cpu)*0.031611, float64(it.ramGiB)*0.004237, float64(it.gpu)*0.95
		w := wCPU + wRAM + wGPU
		nd.cpuPrice = price * wCPU / w / float64(it.cpu)
		nd.ramPrice = price * wRAM / w / nd.ramBytes
		if it.gpu > 0 {
			nd.gpuPrice = price * wGPU / w / float64(it.gpu)
		}
		kv := []string{"kubernetes.io/arch", it.arch, "kubernetes.io/os", "linux", "kubernetes.io/hostname", name,
			"node.kubernetes.io/instance-type", it.name, "topology.kubernetes.io/region", c.region,
			"topology.kubernetes.io/zone", zone}
		if karpenter {
			pool := pick(r, []string{"default", "general-purpose", "batch"})
			if isGPU {
				pool = "gpu"
			}
			ct := "on-demand"
			if spot {
				ct = "spot"
			}
			kv = append(kv, "karpenter.sh/capacity-type", ct, "karpenter.sh/nodepool", pool,
				"karpenter.k8s.aws/instance-ami-id", ami("karpenter-"+it.arch))
		} else {
			group := "ng-general-" + it.arch
			if isGPU {
				group = "ng-gpu"
			}
			ct := "ON_DEMAND"
			if spot {
				ct = "SPOT"
				group += "-spot"
			}
			kv = append(kv, "eks.amazonaws.com/capacityType", ct, "eks.amazonaws.com/nodegroup", group,
				"eks.amazonaws.com/nodegroup-image", ami(group))
		}
		nd.labels = members(kv...)
		if isGPU {
			c.gpuNodes = append(c.gpuNodes, int32(i))
		} else {
			for range max(1, it.cpu/2) {
				c.cpuNodes = append(c.cpuNodes, int32(i))
			}
		}
		c.nodes = append(c.nodes, nd)
	}
}

// buildSystem adds kube-system daemonsets (one pod per node) and the usual add-ons.
func (c *cluster) buildSystem(r *rng) {
	sys := &namespace{name: "kube-system", labels: members("kubernetes.io/metadata.name", "kube-system")}
	kc := &namespace{name: "kubecost", labels: members("kubernetes.io/metadata.name", "kubecost", "team", "platform")}
	c.namespaces = append(c.namespaces, sys, kc)
	small := func(name string, cpu, ramMiB float64) containerSpec {
		return containerSpec{name: name, cpuReq: cpu, ramReq: ramMiB * (1 << 20), cpuUtil: 0.3, ramUtil: 0.6, netRate: 2e6}
	}
	ds := []*controller{
		{name: "aws-node", containers: []containerSpec{small("aws-node", 0.025, 0), small("aws-eks-nodeagent", 0.025, 0)}},
		{name: "kube-proxy", containers: []containerSpec{small("kube-proxy", 0.1, 0)}},
		{name: "ebs-csi-node", containers: []containerSpec{small("ebs-plugin", 0.01, 40), small("node-driver-registrar", 0.01, 40)}},
	}
	for _, ctl := range ds {
		ctl.ns, ctl.kind, ctl.seed, ctl.replicas = sys, "daemonset", r.next(), len(c.nodes)
		ctl.labels = members("app.kubernetes.io/name", ctl.name, "k8s-app", ctl.name,
			"controller-revision-hash", fmt.Sprintf("%x", r.next()%1e10))
		for i := range c.nodes {
			c.slots = append(c.slots, slot{ctrl: ctl, ordinal: i, pat: patContinuous, node: int32(i), seed: r.next()})
		}
	}
	deps := []struct {
		ns       *namespace
		name     string
		replicas int
		cs       []containerSpec
	}{
		{sys, "coredns", 2, []containerSpec{small("coredns", 0.1, 70)}},
		{sys, "ebs-csi-controller", 2, []containerSpec{small("ebs-plugin", 0.01, 40), small("csi-provisioner", 0.01, 40), small("csi-attacher", 0.01, 40)}},
		{sys, "metrics-server", 1, []containerSpec{small("metrics-server", 0.1, 200)}},
		{kc, "kubecost-cost-analyzer", 1, []containerSpec{small("cost-model", 0.2, 55), small("cost-analyzer-frontend", 0.01, 55)}},
		{kc, "kubecost-prometheus-server", 1, []containerSpec{small("prometheus-server", 0.5, 2048), small("prometheus-server-configmap-reload", 0.01, 20)}},
	}
	for _, d := range deps {
		ctl := &controller{ns: d.ns, name: d.name, kind: "deployment", replicas: d.replicas, containers: d.cs,
			labels: members("app.kubernetes.io/name", d.name, "app", d.name), rolloutHours: 24 * 14, seed: r.next(),
			services: []byte(`["` + d.name + `"]`)}
		for o := 0; o < d.replicas; o++ {
			c.slots = append(c.slots, slot{ctrl: ctl, ordinal: o, pat: patRolling, node: -1, life: 24 * 7, phase: int64(r.intn(24 * 7)), seed: r.next()})
		}
	}
}

// buildWorkloads fills a user namespace with about cfg.PodsPerNamespace slots.
// It returns the GPUs still unclaimed.
func (c *cluster) buildWorkloads(r *rng, ns *namespace, team, env string, cfg Config, wantGPU bool, gpuBudget int) int {
	roles := []string{"api", "web", "worker", "consumer", "scheduler", "gateway", "indexer", "sync",
		"processor", "renderer", "admin", "model-server", "exporter", "notifier", "graphql"}
	stateful := []string{"postgres", "redis", "kafka", "elasticsearch", "rabbitmq", "mongodb", "zookeeper"}
	jobs := []string{"report", "backup", "cleanup", "etl", "reindex", "digest", "sync-users"}
	sidecars := []string{"istio-proxy", "fluent-bit", "otel-collector", "vault-agent", "cloudsql-proxy", "envoy"}
	used := map[string]bool{}
	unique := func(base string) string {
		name := ns.name + "-" + base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%s-%d", ns.name, base, i)
		}
		used[name] = true
		return name
	}
	remaining, gotGPU := cfg.PodsPerNamespace, false
	for remaining > 0 {
		ctl := &controller{ns: ns, seed: r.next(), rolloutHours: int64(24 * (1 + r.intn(10)))}
		var pat pattern
		replicas, scaled := 1, 0
		switch x := r.float(); {
		case x < 0.66:
			ctl.kind, ctl.name, pat = "deployment", unique(pick(r, roles)), patRolling
			replicas = 1 + r.intn(min(remaining, max(3, cfg.PodsPerNamespace/10)))
			if replicas > 1 && r.chance(0.3) {
				scaled = 1 + r.intn(replicas)
				if scaled >= replicas {
					scaled = replicas - 1
				}
			}
		case x < 0.80:
			ctl.kind, ctl.name, pat = "statefulset", unique(pick(r, stateful)), patContinuous
			replicas = 1 + r.intn(min(remaining, 3))
			ctl.pvBytes = float64(10+r.intn(500)) * (1 << 30)
		case x < 0.93:
			ctl.kind, ctl.name, pat = "job", unique(pick(r, jobs)), patJob
		default:
			ctl.name, pat = unique("debug-"+pick(r, []string{"shell", "netshoot", "psql", "curl"})), patBare
		}
		remaining -= replicas
		// The first deployment of a GPU namespace always gets GPUs, so small
		// clusters have GPU costs too.
		gpu := wantGPU && ctl.kind == "deployment" && gpuBudget > 0 && (!gotGPU || r.chance(0.4))
		if gpu {
			remaining += replicas
			replicas = min(replicas, gpuBudget)
			remaining -= replicas
			gpuBudget -= replicas
			gotGPU, scaled = true, 0
		}
		ctl.replicas = replicas
		nc := max(1, cfg.ContainersPerPod+pick(r, []int{-1, 0, 0, 1}))
		for i := 0; i < nc; i++ {
			cs := containerSpec{name: pick(r, []string{"app", "server", "main"})}
			if i > 0 {
				cs.name = sidecars[(i-1)%len(sidecars)]
				if i > len(sidecars) {
					cs.name += strconv.Itoa(i)
				}
			}
			cs.cpuReq = pick(r, []float64{0, 0.05, 0.1, 0.1, 0.25, 0.25, 0.5, 1})
			cs.ramReq = pick(r, []float64{0, 64, 128, 256, 512, 512, 1024, 2048, 4096}) * (1 << 20)
			cs.cpuUtil, cs.ramUtil = 0.1+0.9*r.float(), 0.3+0.8*r.float()
			if i > 0 {
				cs.cpuReq, cs.ramReq = cs.cpuReq/4, cs.ramReq/4
			} else {
				cs.netRate = 1e6 * float64(1+r.intn(3000))
			}
			if gpu && i == 0 {
				cs.gpu = 1
			}
			ctl.containers = append(ctl.containers, cs)
		}
		c.labelController(r, ctl, team, env)
		if (ctl.kind == "deployment" || ctl.kind == "statefulset") && r.chance(0.8) {
			ctl.services = []byte(`["` + ctl.name + `"]`)
			if ctl.kind == "deployment" && r.chance(0.15) {
				ctl.lbHourly = 0.0225 / float64(replicas) // one NLB shared by the replicas
			}
		}
		for o := 0; o < replicas+scaled; o++ {
			s := slot{ctrl: ctl, ordinal: o, pat: pat, node: -1, gpu: gpu, seed: r.next()}
			switch {
			case pat == patContinuous:
				s.node = pick(r, c.cpuNodes) // pinned by its volume
				u := hex16(r.next()) + hex16(r.next())
				s.pvKey = "cluster=" + c.name + ":name=pvc-" + u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
				s.pvID = "vol-0" + hex16(r.next())
			case pat == patRolling && o >= replicas:
				s.pat = patScaled
			case pat == patRolling:
				s.life = pick(r, []int64{6, 12, 24, 48, 72, 168, 336})
				s.phase = int64(r.intn(int(s.life)))
			case pat == patJob:
				s.life = pick(r, []int64{1, 2, 4, 6, 12, 24})
				s.phase = int64(r.intn(int(s.life)))
			}
			c.slots = append(c.slots, s)
		}
		ctl.replicas += scaled
	}
	return gpuBudget
}

// labelController gives pods realistic, and realistically incomplete, labels.
func (c *cluster) labelController(r *rng, ctl *controller, team, env string) {
	var kv []string
	role := ctl.name[len(ctl.ns.name)+1:]
	if r.chance(0.9) {
		kv = append(kv, "app", ctl.name)
	}
	if r.chance(0.7) {
		kv = append(kv, "app.kubernetes.io/name", role)
	}
	if r.chance(0.5) {
		kv = append(kv, "app.kubernetes.io/instance", ctl.name)
	}
	if r.chance(0.8) {
		kv = append(kv, "team", team)
	}
	if r.chance(0.75) {
		kv = append(kv, "env", env)
	}
	if r.chance(0.4) {
		kv = append(kv, "version", fmt.Sprintf("v%d.%d.%d", 1+r.intn(3), r.intn(20), r.intn(10)))
	}
	if ctl.kind == "statefulset" {
		kv = append(kv, "controller-revision-hash", fmt.Sprintf("%s-%x", ctl.name, r.next()%1e10))
	}
	// Helm, Istio and cost labels most pods carry: with the node's, about
	// 22 labels a pod. Fixed values: no random draw, so nothing else moves.
	kv = append(kv, "app.kubernetes.io/managed-by", "Helm", "app.kubernetes.io/part-of", ctl.ns.name,
		"app.kubernetes.io/component", role, "helm.sh/chart", role+"-1.4.2",
		"security.istio.io/tlsMode", "istio", "service.istio.io/canonical-name", role,
		"service.istio.io/canonical-revision", "latest", "cost-center", "cc-"+team)
	ctl.labels = members(kv...)
	var an []string
	if r.chance(0.5) {
		an = append(an, "prometheus.io/scrape", "true", "prometheus.io/port", strconv.Itoa(8000+r.intn(2000)))
	}
	if r.chance(0.2) {
		an = append(an, "kubernetes.io/change-cause", `kubectl set image deployment/`+ctl.name+` app=registry/`+role+`:1.`+strconv.Itoa(r.intn(9))+` --record "hotfix"`)
	}
	if r.chance(0.1) {
		an = append(an, "description", "Équipe "+team+" — «critical» path\tservice")
	}
	ctl.annotations = members(an...)
}
