package chart_test

// Scenarios of a first backfill done over several budgeted runs
// (RUN_BUDGET, MAX_CLUSTER_DAYS_PER_RUN): the install-time export Job
// stops at its budget with days left, and the daily runs go on with them.
// A backlog that shrinks run after run is progress, not a hole; one that
// stays as it was is a hole like any other.

// budgeted is a run that stopped at its budget: missing days remain, and
// progress says whether it shrank the backlog.
func budgeted(p push, progress bool) push {
	p.progress = progress
	return p
}

func backlogScenarios() []scenario {
	prod := []string{"prod"}
	job := push{at: 55, cluster: "prod", run: "kse-export-5d8f", start: 5, ok: true, missing: 80}
	return []scenario{{
		name: "a first backfill whose backlog shrinks run after run", clusters: prod, end: 5 * day,
		pushes: cat([]push{budgeted(job, true)},
			[]push{budgeted(daily("prod", 1, true, 60), true), budgeted(daily("prod", 2, true, 40), true),
				budgeted(daily("prod", 3, true, 20), true)},
			days("prod", 4, 4, true, 0)),
	}, {
		name: "a first backfill whose backlog stops shrinking", clusters: prod, end: 5 * day,
		pushes: cat([]push{budgeted(job, true), budgeted(daily("prod", 1, true, 60), true)},
			// Budgeted runs that write nothing: the backlog stays at 60.
			days("prod", 2, 4, true, 60)),
		// The second run since the last progress (day 1) shows it stuck.
		want: []firing{{hole, "prod", 3*day + 5, 0}},
	}, {
		name: "a first backfill whose every later day fails", clusters: prod, end: 3 * day,
		pushes: cat([]push{budgeted(job, true)}, days("prod", 1, 2, false, 80)),
		want:   []firing{{noRecent, "prod", after(55), 0}, {hole, "prod", 2*day + 5, 0}},
	}}
}
