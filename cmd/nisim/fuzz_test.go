package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/pelletier/go-toml/v2"
)

// fuzzRunLimit bounds the simulated time of the run of an accepted
// configuration, so that an execution stays short whatever the workload
// parameters ask for: the building of the model and its first microsecond
// (a thousand cycles of the mesh, two hundred of a LANai) are what a
// parameter can break.
const fuzzRunLimit = clock.Microsecond

// fuzzRunCaps are the sizes up to which FuzzConfigure runs an accepted
// configuration (by key name, in any scenario; for an array, its largest
// element). Go's fuzzer stops a worker whose input takes more than 10 s
// ("deadlocked"), and building larger models takes that long with the
// coverage instrumentation even before the first cycle: a 64x64 mesh takes
// 5 s to build and a minute per simulated microsecond, 10^6 queued LCI or
// Telegraphos operations 10 s and 1.3 GB. Such configurations are legal;
// they are configured, validated and read back, but not run. Below the caps
// the slowest run takes about a second (uninstrumented).
var fuzzRunCaps = map[string]int64{
	"k": 16, "ports": 256, "ops": 2000, "writes": 2000, "reads": 2000, "seeds": 50, "background": 1000,
	"messages": 1000, "iters": 200, "stream": 1000, "stream_messages": 200, "stream_size": 65536, "sizes": 65536,
}

// fuzzHeapLimit is the heap beyond which the target stops the process (a
// crash the fuzzer records with its input) instead of letting an accepted
// configuration take the machine's memory.
const fuzzHeapLimit = 3 << 30

// watchHeap panics, from its own goroutine, once the heap exceeds
// fuzzHeapLimit.
func watchHeap() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for range time.Tick(50 * time.Millisecond) {
		metrics.Read(sample)
		if h := sample[0].Value.Uint64(); h > fuzzHeapLimit {
			panic(fmt.Sprintf("FuzzConfigure: %d MB of heap: an accepted configuration allocates without bound", h>>20))
		}
	}
}

// FuzzConfigure drives the path `nisim run` takes on any scenario with any
// TOML file and any --set values (one per line of sets): scenario.Configure
// then, when the configuration is accepted, a run bounded to fuzzRunLimit of
// simulated time. Properties: nothing panics; an error is one line and
// names the file, the --set value or a key of the scenario; an accepted
// configuration's effective parameters (Dump, what --print-config shows)
// read back through Configure as the same parameters; the bounded run (of
// the configurations within fuzzRunCaps) returns a report or an error, and
// the heap stays below fuzzHeapLimit.
func FuzzConfigure(f *testing.F) {
	cat := catalog()
	keys := make([][]string, len(cat))
	for i, s := range cat {
		keys[i] = leafKeys(f, s)
	}
	for i, s := range cat {
		def, err := scenario.Dump(s.Defaults())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), []byte(nil), "", uint16(0), int64(0), uint8(0), "")
		f.Add(uint8(i), []byte(def), "", uint16(0), int64(0), uint8(0), "")
	}
	seedSets := map[string][]string{
		"demo":                    {"ni.fifo_depth=16\nbus.preset=pci64", "link.corrupt_prob=0.01", "workload.dma_bytes=4096\nhost.clock=100/3 MHz"},
		"mesh":                    {"router.vct=true\nrouter.vc_buf_size=4\npacket_size=6", "traffic=transpose", "packet_size=1:0.5,20:0.5\ninjection_rate_uses_flits=false", "k=4\ntraffic=hotspot\nhotspots=[3]\nhot_fraction=0.3"},
		"graph":                   {"graph_file=../../switch/topology/testdata/twocolumn.graph", "traffic=hotspot\nhotspots=[3]\nhot_fraction=0.3"},
		"myrinet-grid":            {"injection_rate=0.2", "trace_file=../../switch/traffic/testdata/small.trace"},
		"atm-star":                {"traffic=hotspot", "ports=16\nqueue_depth=8"},
		"mchub-star":              {"write_size=4:0.5,64:0.5\nloopback=true", "mapping=pairs"},
		"telegraphos-prodcons":    {"seeds=24"},
		"telegraphos-coherence":   {"counter_cache=0"},
		"lci-logp":                {"platform=p3\nvariant=pio"},
		"lci-latency":             {"platform=p3\nstep=32"},
		"lci-broadcast":           {"tree=binomial\nvariant=pio\nnodes=8"},
		"lci-traffic":             {"nodes=16\nops=10"},
		"remotewrite":             {"firmware.costs.transmit=48"},
		"telegraphos-calibration": {"ops=10"},
	}
	for i, s := range cat {
		for _, sets := range seedSets[s.Name] {
			f.Add(uint8(i), []byte(nil), sets, uint16(0), int64(0), uint8(0), "")
		}
	}
	if b, err := os.ReadFile("../../verify/scenario/noc/testdata/mesh88_lat.toml"); err == nil {
		mesh, _ := cat.Lookup("mesh")
		f.Add(uint8(slices.Index(cat, mesh)), b, "", uint16(0), int64(0), uint8(0), "")
	} else {
		f.Fatal(err)
	}
	f.Add(uint8(0), []byte("[ni]\nfifo_depth = 'deep'\n"), "ni.fifo_depth", uint16(0), int64(0), uint8(0), "")
	f.Add(uint8(1), []byte("k = 4\nk = 5\n"), "=3", uint16(0), int64(0), uint8(0), "")
	f.Add(uint8(1), []byte("[router\n"), "router..vct=true", uint16(0), int64(0), uint8(0), "")
	// Every key of every scenario set to a value near its default.
	for i := range cat {
		for k := range keys[i] {
			f.Add(uint8(i), []byte(nil), "", uint16(k+1), int64(2*k+1), uint8(0), "")
		}
	}

	go watchHeap()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, file []byte, setLines string, key uint16, num int64, shift uint8, str string) {
		i := int(which) % len(cat)
		s := cat[i]
		path := ""
		if len(file) > 0 {
			path = filepath.Join(dir, "fuzz.toml")
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var sets []string
		if setLines != "" {
			sets = strings.Split(setLines, "\n")
		}
		// One more --set of a key of the scenario to num<<shift (or str
		// when it is not empty), so that mutations of these reach the
		// values (the fuzzer changes integers by at most 100 a step).
		if key != 0 {
			v := strconv.FormatInt(num<<(shift%64), 10)
			if str != "" {
				v = str
			}
			sets = append(sets, keys[i][int(key-1)%len(keys[i])]+"="+v)
		}
		p := s.Defaults()
		if err := scenario.Configure(p, path, sets); err != nil {
			checkConfigError(t, s, path, sets, err)
			return
		}

		// The effective parameters read back as the same parameters.
		dump, err := scenario.Dump(p)
		if err != nil {
			t.Fatalf("%s: Dump of an accepted configuration: %v", s.Name, err)
		}
		again := filepath.Join(dir, "effective.toml")
		if err := os.WriteFile(again, []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
		p2 := s.Defaults()
		if err := scenario.Configure(p2, again, nil); err != nil {
			t.Fatalf("%s: the effective parameters of an accepted configuration are refused: %v\n%s", s.Name, err, dump)
		}
		if dump2, _ := scenario.Dump(p2); dump2 != dump {
			t.Fatalf("%s: the effective parameters read back differently:\n%s\nthen\n%s", s.Name, dump, dump2)
		}

		if key, v, over := overCap(t, dump); over {
			t.Logf("%s: not run: %s = %d is above the run cap %d", s.Name, key, v, fuzzRunCaps[key])
			return
		}
		rep, _, _, err := scenario.Exec(s, p, scenario.Options{Seed: 1, TimeLimit: fuzzRunLimit})
		if err == nil && rep == nil {
			t.Fatalf("%s: no report and no error", s.Name)
		}
		if rep != nil {
			var b strings.Builder
			rep.Print(&b)
		}
	})
}

// overCap reports the first value of the effective parameters dump above
// its fuzzRunCaps entry.
func overCap(t *testing.T, dump string) (string, int64, bool) {
	var m map[string]any
	if err := toml.Unmarshal([]byte(dump), &m); err != nil {
		t.Fatalf("the effective parameters do not parse: %v\n%s", err, dump)
	}
	var keys []string
	vals := map[string]int64{}
	var walk func(m map[string]any)
	walk = func(m map[string]any) {
		for k, v := range m {
			switch x := v.(type) {
			case map[string]any:
				walk(x)
			case int64:
				keys, vals[k] = append(keys, k), max(vals[k], x)
			case []any:
				for _, e := range x {
					if n, ok := e.(int64); ok {
						keys, vals[k] = append(keys, k), max(vals[k], n)
					}
				}
			}
		}
	}
	walk(m)
	slices.Sort(keys)
	for _, k := range keys {
		if c, ok := fuzzRunCaps[k]; ok && vals[k] > c {
			return k, vals[k], true
		}
	}
	return "", 0, false
}

// checkConfigError checks that a refused configuration's error is one line
// naming the file, the --set value or a key of the scenario.
func checkConfigError(t *testing.T, s *scenario.Scenario, path string, sets []string, err error) {
	t.Helper()
	msg := err.Error()
	if msg == "" || strings.Contains(msg, "\n") {
		t.Fatalf("%s: error is not one line: %q", s.Name, msg)
	}
	switch {
	case path != "" && strings.HasPrefix(msg, "config "+path):
		return
	case strings.HasPrefix(msg, "--set "):
		for _, v := range sets {
			if strings.HasPrefix(msg, "--set "+v) || strings.HasPrefix(msg, "--set "+strconv.Quote(v)) {
				return
			}
		}
		t.Fatalf("%s: error %q names none of the --set values %q", s.Name, msg, sets)
	case strings.HasPrefix(msg, "invalid parameter "):
		var ke *scenario.KeyError
		rest := strings.TrimPrefix(msg, "invalid parameter ")
		key, _, _ := strings.Cut(rest, ": ")
		if errors.As(err, &ke) {
			key = ke.Key
		}
		if !slices.Contains(scenarioKeys(t, s), key) || !strings.HasPrefix(rest, key+": ") {
			t.Fatalf("%s: error %q does not start with a key of the scenario (got %q)", s.Name, msg, key)
		}
		return
	}
	t.Fatalf("%s: error %q names neither the file %q, a --set value nor a key", s.Name, msg, path)
}

// leafKeys returns the keys of s's parameters that hold values, sorted.
func leafKeys(f *testing.F, s *scenario.Scenario) []string {
	def, err := scenario.Dump(s.Defaults())
	if err != nil {
		f.Fatal(err)
	}
	var m map[string]any
	if err := toml.Unmarshal([]byte(def), &m); err != nil {
		f.Fatal(err)
	}
	var keys []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			} else {
				keys = append(keys, prefix+k)
			}
		}
	}
	walk("", m)
	slices.Sort(keys)
	return keys
}

// scenarioKeys returns every key and table name of s's parameters ("k",
// "router", "router.vct"), from its defaults.
func scenarioKeys(t *testing.T, s *scenario.Scenario) []string {
	t.Helper()
	def, err := scenario.Dump(s.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := toml.Unmarshal([]byte(def), &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			keys = append(keys, prefix+k)
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", m)
	return keys
}
