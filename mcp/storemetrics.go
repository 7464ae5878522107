package mcp

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// storeCollectors are the series an operator of replicas sharing a store
// alerts on: failovers, runs that lost their lease, waits on an
// unreachable store (every tenant's service's coordination.Counts), and the
// store's connection pools when it has any (coordination.PoolReporter).
func storeCollectors(ts *tenants) []prometheus.Collector {
	count := func(name, help string, of func(coordination.Counts) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			var n int64
			for _, svc := range ts.all() {
				n += of(svc.Counts())
			}
			return float64(n)
		})
	}
	return []prometheus.Collector{
		count("massgen_runs_taken_over_total", "Runs this process claimed from a holder that died (a failover, or a crashed run resumed).",
			func(c coordination.Counts) int64 { return c.RunsTakenOver }),
		count("massgen_runs_lease_lost_total", "Runs that stopped because their lease was lost: another process claimed the session, or the claim was released.",
			func(c coordination.Counts) int64 { return c.RunsLostLease }),
		count("massgen_store_waits_total", "Waits of a run or a step for an unreachable store before trying again (one outage is several).",
			func(c coordination.Counts) int64 { return c.StoreWaits }),
		poolCollector{ts: ts},
	}
}

// poolCollector reports the store's connection pools, read at each scrape
// from the default tenant's store (the tenants' stores share them); a
// store without pools reports none.
type poolCollector struct{ ts *tenants }

var (
	poolConnsDesc = prometheus.NewDesc("massgen_store_connections",
		"The store's open connections by pool (main, beats) and state: acquired (in use) or idle.",
		[]string{"pool", "state"}, nil)
	poolMaxDesc = prometheus.NewDesc("massgen_store_connections_max",
		"The cap on the store's connections, by pool.", []string{"pool"}, nil)
	poolWaitsDesc = prometheus.NewDesc("massgen_store_acquire_waits_total",
		"Connection acquires that found none free and waited, by pool.", []string{"pool"}, nil)
	poolWaitDesc = prometheus.NewDesc("massgen_store_acquire_wait_seconds_total",
		"Time those acquires waited, by pool.", []string{"pool"}, nil)
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolConnsDesc
	ch <- poolMaxDesc
	ch <- poolWaitsDesc
	ch <- poolWaitDesc
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	pr, ok := c.ts.def.Store().(coordination.PoolReporter)
	if !ok {
		return
	}
	for _, p := range pr.Pools() {
		ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(p.Acquired), p.Name, "acquired")
		ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(p.Idle), p.Name, "idle")
		ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(p.Max), p.Name)
		ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(p.WaitedAcquires), p.Name)
		ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, p.AcquireWait.Seconds(), p.Name)
	}
}
