// ring-bench-go: the Go peer of ring-bench (Sources/ring-bench). Same workloads, same
// sizes and the same self-checks, written with goroutines and channels as a Go programmer
// would. One run per process: ring-bench starts it once per run, with GOMAXPROCS set to the
// cell's worker count, and reads one line of JSON from stdout:
//
//	{"seconds": 0.12, "operations": 100000, "extras": {...}, "failure": null}
//
// A failed check sets "failure" and ring-bench prints CHECK FAILED instead of a figure.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type outcome struct {
	Seconds    float64            `json:"seconds"`
	Operations int                `json:"operations"`
	Extras     map[string]float64 `json:"extras"`
	Failure    *string            `json:"failure"`
}

func failed(format string, args ...interface{}) outcome {
	message := fmt.Sprintf(format, args...)
	return outcome{Extras: map[string]float64{}, Failure: &message}
}

func timed(start time.Time, operations int, check string) outcome {
	seconds := time.Since(start).Seconds()
	if check != "" {
		return failed("%s", check)
	}
	return outcome{Seconds: seconds, Operations: operations, Extras: map[string]float64{}}
}

func main() {
	workload := flag.String("workload", "", "workload name, as ring-bench's --workload")
	param := flag.Int("param", 1, "the row's parameter: producers/senders, ring kind, actors")
	size := flag.Int("size", 100000, "operations per run (per actor for parallel, leaves for skynet)")
	capacity := flag.Int("capacity", 0, "channel buffer (0: the workload's default)")
	flag.Parse()
	var result outcome
	switch *workload {
	case "ring":
		result = ring(*param, *size, orDefault(*capacity, 1024))
	case "mailbox":
		result = queue(*param, 1, *size / *param, orDefault(*capacity, 1024))
	case "pingpong":
		result = pingpong(*size)
	case "threadring":
		result = threadring(*param, *size)
	case "fanin":
		result = fanin(*param, *size / *param, orDefault(*capacity, 1024))
	case "spawn":
		result = spawn(*size)
	case "parallel":
		result = parallel(*param, *size, orDefault(*capacity, 256))
	case "ask":
		result = ask(*size)
	case "skynet":
		result = skynet(*size)
	case "chameneos":
		result = chameneos(*param, *size)
	default:
		result = failed("the Go peer has no workload %q", *workload)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		os.Exit(1)
	}
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// ring: spsc (1 → 1), mpsc (2 → 1), mpmc (2 → 2) over one buffered channel.
func ring(kind, size, capacity int) outcome {
	switch kind {
	case 1:
		return queue(1, 1, size, capacity)
	case 2:
		return queue(2, 1, size/2, capacity)
	default:
		return queue(2, 2, size/2, capacity)
	}
}

// queue: producers send producer<<32|sequence on one channel; each consumer checks that
// every producer's sequence rises (by exactly one with one consumer); together they must
// take every word once (count and sum).
func queue(producers, consumers, each, capacity int) outcome {
	ch := make(chan uint64, capacity)
	total := producers * each
	type seen struct {
		taken, sum int
		disorder   string
	}
	results := make([]seen, consumers)
	var done sync.WaitGroup
	var producing sync.WaitGroup
	start := time.Now()
	for p := 0; p < producers; p++ {
		producing.Add(1)
		go func(p int) {
			defer producing.Done()
			for s := 0; s < each; s++ {
				ch <- uint64(p)<<32 | uint64(s)
			}
		}(p)
	}
	go func() { producing.Wait(); close(ch) }()
	for c := 0; c < consumers; c++ {
		done.Add(1)
		go func(c int) {
			defer done.Done()
			last := make([]int, producers)
			for i := range last {
				last[i] = -1
			}
			r := &results[c]
			for w := range ch {
				p, s := int(w>>32), int(w&0xFFFFFFFF)
				if (consumers == 1 && s != last[p]+1) || s <= last[p] {
					if r.disorder == "" {
						r.disorder = fmt.Sprintf("producer %d: #%d after #%d", p, s, last[p])
					}
				}
				last[p] = s
				r.taken++
				r.sum += s
			}
		}(c)
	}
	done.Wait()
	taken, sum := 0, 0
	for _, r := range results {
		if r.disorder != "" {
			return failed("%s", r.disorder)
		}
		taken += r.taken
		sum += r.sum
	}
	check := ""
	if taken != total {
		check = fmt.Sprintf("took %d words, expected %d", taken, total)
	} else if sum != producers*each*(each-1)/2 {
		check = fmt.Sprintf("sequence sum %d is wrong", sum)
	}
	return timed(start, total, check)
}

// pingpong: two goroutines bounce a counter over unbuffered channels.
func pingpong(rounds int) outcome {
	ping, pong := make(chan int), make(chan int)
	answered := 0
	go func() {
		for n := range ping {
			answered++
			pong <- n
		}
	}()
	start := time.Now()
	last := 0
	for n := 1; n <= rounds; n++ {
		ping <- n
		last = <-pong
	}
	result := timed(start, rounds, "")
	close(ping)
	if answered != rounds || last != rounds {
		return failed("ponger answered %d times, last %d, expected %d", answered, last, rounds)
	}
	return result
}

// threadring: actors goroutines in a ring, each with an unbuffered channel; the token
// starts at 0 carrying hops; the goroutine that receives 0 ends the run.
func threadring(actors, hops int) outcome {
	channels := make([]chan int, actors)
	for i := range channels {
		channels[i] = make(chan int)
	}
	counts := make([]int, actors)
	ended := make(chan int)
	for i := 0; i < actors; i++ {
		go func(i int) {
			next := channels[(i+1)%actors]
			for token := range channels[i] {
				counts[i]++
				if token == 0 {
					ended <- i
					return
				}
				next <- token - 1
			}
		}(i)
	}
	start := time.Now()
	channels[0] <- hops
	at := <-ended
	result := timed(start, hops, "")
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != hops+1 || at != hops%actors {
		return failed("%d deliveries ending at %d, expected %d ending at %d", total, at, hops+1, hops%actors)
	}
	return result
}

// fanin: senders goroutines send (sender, sequence) on one buffered channel; the receiver
// checks each sender's order and the count.
func fanin(senders, each, capacity int) outcome {
	type message struct{ sender, sequence int }
	ch := make(chan message, capacity)
	start := time.Now()
	for s := 0; s < senders; s++ {
		go func(s int) {
			for i := 0; i < each; i++ {
				ch <- message{s, i}
			}
		}(s)
	}
	next := make([]int, senders)
	disorder := ""
	for received := 0; received < senders*each; received++ {
		m := <-ch
		if m.sequence != next[m.sender] && disorder == "" {
			disorder = fmt.Sprintf("sender %d: got #%d, expected #%d", m.sender, m.sequence, next[m.sender])
		}
		next[m.sender] = m.sequence + 1
	}
	return timed(start, senders*each, disorder)
}

func residentBytes() float64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.Atoi(fields[1])
	return float64(pages * os.Getpagesize())
}

func inUse() float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse + m.StackInuse)
}

// spawn: count goroutines, each with its own channel (buffered 1, so a send never blocks,
// as a tell), one message each; all stay alive until measured.
func spawn(count int) outcome {
	var received sync.WaitGroup
	received.Add(count)
	var mu sync.Mutex
	sum := 0
	channels := make([]chan int, count)
	heap0, rss0 := inUse(), residentBytes()
	start := time.Now()
	for i := 0; i < count; i++ {
		ch := make(chan int, 1)
		channels[i] = ch
		go func() {
			v := <-ch
			mu.Lock()
			sum += v
			mu.Unlock()
			received.Done()
			<-ch // stay alive until closed
		}()
		ch <- i
	}
	received.Wait()
	result := timed(start, count, "")
	result.Extras["heap_bytes_per_actor"] = (inUse() - heap0) / float64(count)
	result.Extras["rss_bytes_per_actor"] = (residentBytes() - rss0) / float64(count)
	for _, ch := range channels {
		close(ch)
	}
	if sum != count*(count-1)/2 {
		return failed("payload sum %d, expected %d", sum, count*(count-1)/2)
	}
	return result
}

// compute is ring-bench's fixed work per message (ParallelWorkload.Work), bit for bit.
func compute(seed int) uint64 {
	x := uint64(seed) + 0x9E3779B97F4A7C15
	for i := 0; i < 100; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// parallel: one driver sends each seed round-robin to actors goroutines over buffered
// channels; each sums compute(seed); every sum must equal the precomputed one.
func parallel(actors, each, capacity int) outcome {
	channels := make([]chan int, actors)
	sums := make([]uint64, actors)
	var done sync.WaitGroup
	done.Add(actors)
	for a := 0; a < actors; a++ {
		channels[a] = make(chan int, capacity)
		go func(a int) {
			defer done.Done()
			for seed := range channels[a] {
				sums[a] += compute(seed)
			}
		}(a)
	}
	start := time.Now()
	for seed := 0; seed < each; seed++ {
		for _, ch := range channels {
			ch <- seed
		}
	}
	for _, ch := range channels {
		close(ch)
	}
	done.Wait()
	result := timed(start, actors*each, "")
	var expected uint64
	for seed := 0; seed < each; seed++ {
		expected += compute(seed)
	}
	for a, s := range sums {
		if s != expected {
			return failed("actor %d's checksum is wrong", a)
		}
	}
	return result
}

// ask: the caller sends (n, reply channel) to an echo goroutine and waits for n back;
// latencies of every call, percentiles exact (sorted), in ns.
func ask(calls int) outcome {
	type request struct {
		n     int
		reply chan int
	}
	requests := make(chan request)
	go func() {
		for r := range requests {
			r.reply <- r.n
		}
	}()
	reply := make(chan int)
	warm := calls / 10
	if warm > 1000 {
		warm = 1000
	}
	for n := 0; n < warm; n++ {
		requests <- request{n, reply}
		<-reply
	}
	latencies := make([]float64, calls)
	wrong := 0
	start := time.Now()
	for n := 0; n < calls; n++ {
		t := time.Now()
		requests <- request{n, reply}
		if <-reply != n {
			wrong++
		}
		latencies[n] = float64(time.Since(t).Nanoseconds())
	}
	result := timed(start, calls, "")
	close(requests)
	if wrong > 0 {
		return failed("%d wrong replies", wrong)
	}
	sort.Float64s(latencies)
	at := func(p float64) float64 { return latencies[int(p/100*float64(calls-1))] }
	result.Extras["p50_ns"], result.Extras["p90_ns"], result.Extras["p99_ns"] = at(50), at(90), at(99)
	result.Extras["p999_ns"], result.Extras["max_ns"] = at(99.9), latencies[calls-1]
	return result
}

// skynet: a goroutine per node, 10 children each, leaves report their number.
func skynet(leaves int) outcome {
	var node func(first, leaves int, out chan<- int)
	node = func(first, leaves int, out chan<- int) {
		if leaves == 1 {
			out <- first
			return
		}
		child := leaves / 10
		results := make(chan int, 10)
		for i := 0; i < 10; i++ {
			go node(first+i*child, child, results)
		}
		sum := 0
		for i := 0; i < 10; i++ {
			sum += <-results
		}
		out <- sum
	}
	nodes := 0
	for level := leaves; level >= 1; level /= 10 {
		nodes += level
	}
	out := make(chan int, 1)
	start := time.Now()
	go node(0, leaves, out)
	sum := <-out
	check := ""
	if sum != leaves*(leaves-1)/2 {
		check = fmt.Sprintf("sum %d, expected %d", sum, leaves*(leaves-1)/2)
	}
	return timed(start, nodes, check)
}

// chameneos: creatures goroutines ask one mall goroutine for a mate over one unbuffered
// channel; the mall pairs them two by two until meetings happened, then answers stop.
func chameneos(creatures, meetings int) outcome {
	type reply struct {
		stop   bool
		colour int
	}
	type request struct {
		colour int
		reply  chan reply
	}
	complement := func(a, b int) int {
		if a == b {
			return a
		}
		return 3 - a - b
	}
	mall := make(chan request)
	met := make(chan int, creatures)
	start := time.Now()
	go func() {
		left := meetings
		var waiting *request
		stopped := 0
		for stopped < creatures {
			r := <-mall
			if left == 0 {
				r.reply <- reply{stop: true}
				stopped++
				continue
			}
			if waiting == nil {
				w := r
				waiting = &w
				continue
			}
			left--
			waiting.reply <- reply{colour: r.colour}
			r.reply <- reply{colour: waiting.colour}
			waiting = nil
		}
	}()
	for c := 0; c < creatures; c++ {
		go func(colour int) {
			replies := make(chan reply, 1)
			count := 0
			for {
				mall <- request{colour, replies}
				r := <-replies
				if r.stop {
					met <- count
					return
				}
				colour = complement(colour, r.colour)
				count++
			}
		}(c % 3)
	}
	total := 0
	for c := 0; c < creatures; c++ {
		total += <-met
	}
	check := ""
	if total != 2*meetings {
		check = fmt.Sprintf("chameneos met %d times, expected %d", total, 2*meetings)
	}
	return timed(start, meetings, check)
}
