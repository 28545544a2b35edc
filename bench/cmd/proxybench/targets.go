package main

import (
	"fmt"
	"time"
)

// A verdict is one target of the issue, judged on one run's rows.
type verdict struct {
	scenario string
	text     string // the figure against its target
	state    string // "met", "missed", or "unknown" when a row it needs is missing
}

// results are a run's rows by proxy and scenario.
type results map[[2]string]result

func (rs results) get(proxyName, scenarioName string) (result, bool) {
	r, ok := rs[[2]string{proxyName, scenarioName}]
	return r, ok
}

// judge judges subject's rows against the targets (issue 26),
// which are ratios to other rows of the same run where they can be:
//   - overhead: req/s at least nginx's (1.0; 0.8 is the floor), CPU per
//     request at most 1.5x nginx's, every request answered 2xx;
//   - fixed5ms: p99 within 1 ms of the backends' own (direct);
//   - slow1: p99 at most 5 ms;
//   - err1 and kill1: at least 99.99% answered 2xx;
//   - overload: goodput at least 95% of what the backends can serve,
//     with p99 at most 50 ms.
//
// drop has no target in the issue; its line says what it measured.
func judge(rs results, subject string) []verdict {
	var vs []verdict
	add := func(sc, text string, met bool) {
		state := "missed"
		if met {
			state = "met"
		}
		vs = append(vs, verdict{scenario: sc, text: text, state: state})
	}
	unknown := func(sc, what string) {
		vs = append(vs, verdict{scenario: sc, text: "no " + what + " row", state: "unknown"})
	}
	if s, ok := rs.get(subject, "overhead"); !ok {
		unknown("overhead", subject)
	} else if n, ok := rs.get("nginx", "overhead"); !ok {
		unknown("overhead", "nginx")
	} else {
		ratio := s.okRPS() / n.okRPS()
		floor := "above the floor"
		if ratio < 0.8 {
			floor = "below the floor"
		}
		if ratio >= 1 {
			floor = ""
		}
		add("overhead", fmt.Sprintf("ok req/s %.0f = %.2fx nginx's %.0f (>= 1.0, floor 0.8) %s", s.okRPS(), ratio, n.okRPS(), floor), ratio >= 1)
		cpu := s.cpuPerRequest() / n.cpuPerRequest()
		add("overhead", fmt.Sprintf("CPU %.1f us/request = %.2fx nginx's %.1f (<= 1.5)", s.cpuPerRequest(), cpu, n.cpuPerRequest()), cpu <= 1.5)
		add("overhead", fmt.Sprintf("success %.3f%% (100%%)", 100*s.okShare()), s.ok == s.n && s.n > 0)
	}
	if s, ok := rs.get(subject, "fixed5ms"); !ok {
		unknown("fixed5ms", subject)
	} else if d, ok := rs.get("direct", "fixed5ms"); !ok {
		unknown("fixed5ms", "direct")
	} else {
		add("fixed5ms", fmt.Sprintf("p99 %.3f ms = direct's %.3f %+.3f ms (<= +1 ms)", ms(s.p99), ms(d.p99), ms(s.p99-d.p99)), s.p99-d.p99 <= time.Millisecond)
	}
	if s, ok := rs.get(subject, "slow1"); !ok {
		unknown("slow1", subject)
	} else {
		add("slow1", fmt.Sprintf("p99 %.3f ms (<= 5 ms)", ms(s.p99)), s.p99 <= 5*time.Millisecond)
	}
	for _, sc := range []string{"err1", "kill1"} {
		if s, ok := rs.get(subject, sc); !ok {
			unknown(sc, subject)
		} else {
			add(sc, fmt.Sprintf("success %.3f%% (>= 99.99%%)", 100*s.okShare()), s.okShare() >= 0.9999)
		}
	}
	for _, sc := range scenarios {
		if sc.name != "overload" && sc.name != "drop" {
			continue
		}
		s, ok := rs.get(subject, sc.name)
		if !ok {
			unknown(sc.name, subject)
			continue
		}
		capacity := sc.served
		text := fmt.Sprintf("goodput %.0f/s = %.1f%% of the %.0f/s served at most", s.okRPS(), 100*s.okRPS()/capacity, capacity)
		if d, ok := rs.get("direct", sc.name); ok && sc.saturate > 0 && d.okRPS() < capacity {
			capacity = d.okRPS()
			text = fmt.Sprintf("goodput %.0f/s = %.1f%% of the %.0f/s the backends served kept busy directly (%.1f%% of the nominal %.0f/s)",
				s.okRPS(), 100*s.okRPS()/capacity, capacity, 100*s.okRPS()/sc.served, sc.served)
		}
		share := s.okRPS() / capacity
		text += fmt.Sprintf(", p99 %.1f ms", ms(s.p99))
		if sc.name == "drop" {
			vs = append(vs, verdict{scenario: sc.name, text: text + " (no target in the issue)", state: "-"})
			continue
		}
		add(sc.name, text+" (>= 95%, <= 50 ms)", share >= 0.95 && s.p99 <= 50*time.Millisecond)
	}
	return vs
}
