package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
)

const devbenchUsage = `usage: gpumem devbench [flags]

Measure buffer moves on a WebGPU adapter: one big copyBufferToBuffer
between two buffers, then batches of moves of 4 KiB, 64 KiB, 1 MiB and
64 MiB within one buffer through the copy path (copyBufferToBuffer through a
scratch buffer) and through the compute path (the move kernels), moves of
64 KiB whose source is 4 bytes off 16-byte alignment (compute), and a sweep
of 64 KiB blocks that slide over themselves (compute, through scratch).

GB/s counts bytes read plus bytes written (twice the bytes moved) over the
GPU time of a batch: the wait after the submit returns, with enough batches
in one submit ("per submit") to run about 20 ms; "kernel GB/s" is over the
GPU timestamps around the batches, where the adapter has them. "record"
and "submit" are the CPU time of recording one batch and of its share of
the submit. Each number is the median of -iters submits after two warm-up
batches and, on a GPU, 300 ms of other copies that bring its clock back up
from wherever the case's setup left it; the benchmarks (go test -bench)
measure through the same code.

The adapter is chosen by -device (as in gpumem demo, but a GPU is needed:
webgpu for any adapter, or one backend: vulkan, metal on macOS, dx12 on
Windows, gl), -power and -fallback, or else by GPUMEM_WEBGPU_BACKEND,
GPUMEM_WEBGPU_POWER and GPUMEM_WEBGPU_FALLBACK. On an NVIDIA machine whose
Vulkan loader does not find the driver, set
VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json.

Flags:
`

// devbenchRow is one measured case; the JSON keys are a stable interface.
type devbenchRow struct {
	Adapter          string  `json:"adapter"`
	Backend          string  `json:"backend"`
	Case             string  `json:"case"`
	Path             string  `json:"path"`
	MoveBytes        uint64  `json:"move_bytes"`
	Moves            int     `json:"moves"`
	Bytes            uint64  `json:"bytes"`
	BatchesPerSubmit int     `json:"batches_per_submit"`
	GPUSeconds       float64 `json:"gpu_seconds"`
	GBps             float64 `json:"gb_per_s"`
	RecordSeconds    float64 `json:"record_seconds"`
	RecordNsPerMove  float64 `json:"record_ns_per_move"`
	SubmitSeconds    float64 `json:"submit_seconds"`
	// KernelSeconds and KernelGBps come from GPU timestamps (0 where the
	// device has none): the moves' own time, without submit and wake-up.
	KernelSeconds float64 `json:"kernel_seconds"`
	KernelGBps    float64 `json:"kernel_gb_per_s"`
}

func runDevbench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), devbenchUsage)
		fs.PrintDefaults()
	}
	var (
		asJSON   bool
		iters    int
		totalMiB uint64
		opts     webgpu.Options
		only     string
		dev      string
	)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per case instead of a table")
	fs.IntVar(&iters, "iters", 5, "measure `N` batches per case; numbers are medians")
	fs.Uint64Var(&totalMiB, "total", 256, "bytes of each batch (and of the big copy) in `MiB`")
	fs.StringVar(&dev, "device", "webgpu", deviceFlagHelp)
	fs.StringVar(&dev, "backend", "webgpu", "the old name of -device")
	fs.StringVar(&opts.Power, "power", "", "power preference: low or high")
	fs.BoolVar(&opts.Fallback, "fallback", false, "force the fallback (software) adapter")
	fs.StringVar(&only, "path", "", "run only cases of this `path`: buffer, copy, compute or sweep")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := checkDevice(dev, false); err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q (devbench takes flags only)", rest[0])
	case iters < 1:
		return usagef("-iters %d: want at least 1", iters)
	case totalMiB < 1 || totalMiB > 1<<14:
		return usagef("-total %d: want 1 to 16384 MiB", totalMiB)
	}
	switch only {
	case "", "buffer", "copy", "compute", "sweep":
	default:
		return usagef("-path %q: want buffer, copy, compute or sweep", only)
	}

	opts.AdapterLimits = true // batches of hundreds of MiB need the GPU's own limits
	d, err := openWebGPU(dev, opts)
	if err != nil {
		return err
	}
	defer d.Release()
	info := d.Info()
	total := totalMiB << 20
	if lim := d.Limits().MaxBufferSize; 2*total+256 > lim {
		return fmt.Errorf("-total %d MiB: the moves need a buffer of %d MiB, over the adapter's MaxBufferSize of %d MiB", totalMiB, 2*totalMiB, lim>>20)
	}

	var rows []devbenchRow
	enc := json.NewEncoder(stdout)
	if !asJSON {
		lim := d.Limits()
		fmt.Fprintf(stdout, "adapter: %v\nlimits: buffer %d MiB, storage binding %d MiB\nbatches of %d MiB, median of %d\n\n",
			info, lim.MaxBufferSize>>20, lim.MaxStorageBufferBindingSize>>20, totalMiB, iters)
	}
	for _, c := range devbench.Cases(total) {
		if only != "" && c.Path != only {
			continue
		}
		r, err := devbench.Run(d, c, iters)
		if err != nil {
			if !asJSON {
				printDevbench(stdout, rows)
			}
			return fmt.Errorf("%s %s: %w", c.Path, c.Name, err)
		}
		row := devbenchRow{
			Adapter:          info.Name,
			Backend:          info.Backend,
			Case:             c.Name,
			Path:             c.Path,
			MoveBytes:        c.MoveBytes,
			Moves:            c.Moves,
			Bytes:            r.Bytes,
			BatchesPerSubmit: r.Batches,
			GPUSeconds:       r.GPU.Seconds(),
			GBps:             r.GBps(),
			RecordSeconds:    r.Record.Seconds(),
			RecordNsPerMove:  float64(r.RecordPerMove().Nanoseconds()),
			SubmitSeconds:    r.Submit.Seconds(),
			KernelSeconds:    r.Kernel.Seconds(),
			KernelGBps:       r.KernelGBps(),
		}
		if asJSON {
			if err := enc.Encode(row); err != nil {
				return err
			}
			continue
		}
		rows = append(rows, row)
	}
	if !asJSON {
		printDevbench(stdout, rows)
	}
	return nil
}

func printDevbench(w io.Writer, rows []devbenchRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tpath\tmoves\tper submit\tGPU ms\tGB/s\tkernel GB/s\trecord ms\trecord/move\tsubmit ms\t")
	for _, r := range rows {
		kernel := "-"
		if r.KernelSeconds > 0 {
			kernel = fmt.Sprintf("%.1f", r.KernelGBps)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.1f\t%s\t%.3f\t%s\t%.3f\t\n",
			r.Case, r.Path, r.Moves, r.BatchesPerSubmit, r.GPUSeconds*1e3, r.GBps, kernel, r.RecordSeconds*1e3, nsString(r.RecordNsPerMove), r.SubmitSeconds*1e3)
	}
	tw.Flush()
}

func nsString(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return strings.TrimSpace(fmt.Sprintf("%.0f ns", ns))
}
