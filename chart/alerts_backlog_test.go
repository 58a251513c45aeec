package chart_test

import "strconv"

// Scenarios of a first backfill done over several budgeted runs
// (RUN_BUDGET, MAX_CLUSTER_DAYS_PER_RUN): the install-time export Job
// stops at its budget with days left, and the daily runs go on with them.
// A backlog that shrinks run after run is progress, not a hole; one that
// stays as it was, or shrinks while a day of the cluster keeps failing
// (app.Summary.Progressed), is a hole like any other.
//
// With holeRuns 2 the hole alert fires at the first push of the second
// run that started (first attempt) after the last progress or the last
// whole archive without either happening, and resolves at the push of a
// run that shrinks the backlog or leaves nothing missing. Each scenario
// names the rule mutations (alerts_mutation_test.go) it must catch.
//
// promtool's test engine loads at most 10000 samples per query, and a
// lookback (7d) range over a series scraped every minute holds 10080: a
// scenario must end before any of its series is 6.9 days old.

// budgeted is a run that stopped at its budget: missing days remain, and
// progress says whether it shrank the backlog.
func budgeted(p push, progress bool) push {
	p.progress = progress
	return p
}

// exportJob is the install-time export Job's one attempt for cluster c:
// it stops at its budget with 80 days left, having shrunk the backlog.
func exportJob(c string) push {
	return push{at: 55, cluster: c, run: "kse-export-5d8f", start: 5, ok: true, missing: 80, progress: true}
}

// attempt is pod attempt a (0, 1, 2: backoffLimit 2) of day d's run of a
// federated Job for cluster c. The attempts start at 00:00, 00:11 and
// 00:21 and push at 00:10, 00:20 and 00:30, each under the run label of
// the Job and with its own start.
func attempt(c string, d, a int, ok bool, missing int, progress bool) push {
	return push{at: d*day + 10*(a+1), cluster: c, run: "kse-" + strconv.Itoa(d), start: d*day + []int{0, 11, 21}[a],
		ok: ok, missing: missing, progress: progress}
}

// down is every attempt of day d's run for clusters cs failing before it
// could plan (Kubecost unreachable): no archive_missing_days, no progress.
func down(d int, cs ...string) []push {
	var out []push
	for a := range 3 {
		for _, c := range cs {
			out = append(out, attempt(c, d, a, false, -1, false))
		}
	}
	return out
}

func backlogScenarios() []scenario {
	prod := []string{"prod"}
	job := exportJob("prod")
	return []scenario{{
		name: "a first backfill whose backlog shrinks run after run", clusters: prod, end: 5 * day,
		pushes: cat([]push{job},
			[]push{budgeted(daily("prod", 1, true, 60), true), budgeted(daily("prod", 2, true, 40), true),
				budgeted(daily("prod", 3, true, 20), true)},
			days("prod", 4, 4, true, 0)),
		kills: []string{mutNoProgress},
	}, {
		name: "a first backfill whose backlog stops shrinking, then shrinks again", clusters: prod, end: 6*day + hour,
		pushes: cat([]push{job, budgeted(daily("prod", 1, true, 60), true)},
			// Budgeted runs that write nothing (their budget spent before
			// a day was written): the backlog stays at 60.
			days("prod", 2, 3, true, 60),
			[]push{budgeted(daily("prod", 4, true, 40), true)},
			days("prod", 5, 6, true, 40)),
		// Day 2 is the first run since the last progress (day 1), day 3
		// the second; day 4's shrinks the backlog again, and the count
		// starts again from it: days 5 and 6.
		want:  []firing{{hole, "prod", 3*day + 5, 4*day + 5}, {hole, "prod", 6*day + 5, 0}},
		kills: []string{mutNoProgress},
	}, {
		name: "a first backfill whose every later day fails", clusters: prod, end: 3 * day,
		pushes: cat([]push{job}, days("prod", 1, 2, false, 80)),
		want:   []firing{{noRecent, "prod", after(55), 0}, {hole, "prod", 2*day + 5, 0}},
		kills:  []string{mutNoProgress},
	}, {
		name: "a backlog that shrinks while one day keeps failing", clusters: prod, end: 6 * day,
		pushes: cat([]push{job, budgeted(daily("prod", 1, true, 60), true)},
			// Each run writes 20 days and fails the same one: the backlog
			// shrinks, but a failed day is no progress.
			[]push{daily("prod", 2, false, 41), daily("prod", 3, false, 21), daily("prod", 4, false, 1)},
			days("prod", 5, 5, true, 0)),
		want: []firing{
			{noRecent, "prod", after(day + 5), 5*day + 5},
			{hole, "prod", 3*day + 5, 5*day + 5},
			{failing, "prod", 4*day + 5, 5*day + 5},
		},
		kills: []string{mutNoProgress},
	}, {
		name: "Pushgateway restarts between runs that shrink the backlog and before a stuck run", clusters: prod, end: 6 * day,
		pushes: cat([]push{job, budgeted(daily("prod", 1, true, 60), true), budgeted(daily("prod", 2, true, 40), true)},
			days("prod", 3, 4, true, 40),
			[]push{budgeted(daily("prod", 5, true, 20), true)}),
		restarts: []int{day + 12*hour, 3*day + 12*hour},
		// Day 3 is the first run since the last progress (day 2), day 4,
		// after the second restart, the second.
		want:  []firing{{hole, "prod", 4*day + 5, 5*day + 5}},
		kills: []string{mutNoProgress},
	}, {
		name: "a fleet's backfill whose Job is retried for another cluster's failed day", clusters: []string{"alpha", "beta"}, end: 4 * day,
		pushes: cat([]push{exportJob("alpha"), exportJob("beta")},
			// Day 1's first attempt shrinks alpha's backlog and fails a
			// day of beta's, so the Job's pod is retried; Kubecost is
			// down from 00:15, and the retries and the next days' runs
			// fail before planning.
			[]push{attempt("alpha", 1, 0, true, 60, true), attempt("beta", 1, 0, false, 61, false)},
			down(1, "alpha", "beta")[2:], down(2, "alpha", "beta"), down(3, "alpha", "beta")),
		want: []firing{
			// alpha: day 1's run started before its progress (00:10),
			// whatever its retries; days 2 and 3 are the two runs since.
			{noRecent, "alpha", after(day + 10), 0},
			{hole, "alpha", 3*day + 10, 0},
			// beta: the runs of days 1 and 2 since the export Job's
			// progress; days 1 to 3 since its success.
			{noRecent, "beta", after(55), 0},
			{hole, "beta", 2*day + 10, 0},
			{failing, "beta", 3*day + 10, 0},
		},
		kills: []string{mutNoProgress, mutLastAttempt},
	}, {
		name: "a federated fleet where one cluster is stuck", clusters: fleet, end: 4 * day,
		pushes: cat([]push{exportJob("prod"), exportJob("staging")}, stuckFleet(1, 3)),
		want: []firing{
			// prod's every attempt shrinks its backlog; staging's fails.
			{noRecent, "staging", after(55), 0},
			{hole, "staging", 2*day + 10, 0},
			{failing, "staging", 3*day + 10, 0},
		},
		kills: []string{mutNoProgress},
	}, {
		name: "a manual Job created again under the same name", clusters: prod, end: 4 * day,
		pushes: cat([]push{job},
			[]push{budgeted(push{at: 6*hour + 5, cluster: "prod", run: "kse-manual", start: 6 * hour, ok: true, missing: 70}, true)},
			[]push{budgeted(daily("prod", 1, true, 60), true), daily("prod", 2, true, 60)},
			// kse-manual was deleted, and is created again on day 2: a
			// new run since day 1's progress, not a retry of day 0's.
			[]push{{at: 2*day + 6*hour + 5, cluster: "prod", run: "kse-manual", start: 2*day + 6*hour, ok: true, missing: 60}},
			[]push{budgeted(daily("prod", 3, true, 40), true)}),
		want:  []firing{{hole, "prod", 2*day + 6*hour + 5, 3*day + 5}},
		kills: []string{mutNoProgress, mutFirstEver},
	}}
}

// stuckFleet is the daily runs of days from..to of a federated Job over
// prod and staging: staging's budgeted days fail in every attempt, so the
// Job's pod is retried twice; prod's backlog shrinks in each attempt.
func stuckFleet(from, to int) []push {
	var out []push
	left := 80
	for d := from; d <= to; d++ {
		for a := range 3 {
			left -= 4
			out = append(out, attempt("prod", d, a, true, left, true), attempt("staging", d, a, false, 80, false))
		}
	}
	return out
}
