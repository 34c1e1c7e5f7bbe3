package flowmodel

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// A flow-model's kernel is a plain kernel: its streams are whole buffers
// and each work-item finds its element with get_global_id (OpenCL) or
// blockIdx·blockDim+threadIdx (CUDA). A graph kernel actor is a FIRE
// procedure of the seed-002 actor API, fired once per work-group on
// windows of ring buffers. The generated FIRE of a model's actor takes its
// streams' windows (CAPTURE, RESERVE) and calls the model's kernel,
// turned into a device function with the work-item's ids as leading
// arguments, once for every work-item of the model's range: work-item l
// of the firing's group runs ids l, l+I, l+2I, ….
//
// The model's source keeps its lines (a "#line" directive follows the
// generated macros), so build errors point at the model's kernel file.

// fmLang is how a flow-model kernel of one language becomes a FIRE actor.
type fmLang struct {
	kind graph.ImplKind
	// entry matches the kernel's declaration up to its opening parenthesis;
	// %s is the entry's name.
	entry string
	// fn is what replaces it, before the ids' parameters.
	fn string
	// ids are the parameters giving the work-item's ids.
	ids string
	// macros make the model's id built-ins read the parameters (%s are the
	// global sizes G0, G1, G2, the dimensions and the block sizes).
	macros func(g, b [3]int, dims int) string
	// undef removes the macros before FIRE.
	undef string
	// call is the id arguments of one call, for linear work-item index l.
	call func(g, b [3]int) string
	// cooperative finds what makes work-items cooperate.
	cooperative *regexp.Regexp
	// lit spells a parameter as a constant.
	lit func(p Param) string
	// localID and localSize are FIRE's work-item index and count.
	localID, localSize string
}

var (
	fmOpenCL = fmLang{
		kind:  graph.ImplOpenCL,
		entry: `(?:__kernel|kernel)\s+(?:__attribute__\s*\(\(.*?\)\)\s*)*void\s+%s\s*\(`,
		fn:    "void %s(",
		ids:   "size_t sl_fm_g0, size_t sl_fm_g1, size_t sl_fm_g2, ",
		macros: func(g, _ [3]int, dims int) string {
			return fmt.Sprintf("#define get_global_id(d) ((size_t)((d) == 0 ? sl_fm_g0 : (d) == 1 ? sl_fm_g1 : (d) == 2 ? sl_fm_g2 : 0))\n"+
				"#define get_global_size(d) ((size_t)((d) == 0 ? %d : (d) == 1 ? %d : (d) == 2 ? %d : 1))\n"+
				"#define get_global_offset(d) ((size_t)0)\n#define get_work_dim() ((uint)%d)\n", g[0], g[1], g[2], dims)
		},
		undef: "#undef get_global_id\n#undef get_global_size\n#undef get_global_offset\n#undef get_work_dim\n",
		call: func(g, _ [3]int) string {
			return fmt.Sprintf("sl_fm_l %% %d, sl_fm_l / %d %% %d, sl_fm_l / %d", g[0], g[0], g[1], g[0]*g[1])
		},
		cooperative: regexp.MustCompile(`\b(barrier|work_group_barrier|mem_fence|read_mem_fence|write_mem_fence|get_local_id|get_group_id|get_local_size|get_num_groups|get_enqueued_local_size|get_local_linear_id|work_group_\w+|sub_group_\w+|__local)\b|\blocal\s+[A-Za-z_]`),
		lit:         clLiteral,
		localID:     "get_local_id(0)", localSize: "get_local_size(0)",
	}
	fmCUDA = fmLang{
		kind:  graph.ImplCUDA,
		entry: `(?:extern\s+"C"\s+)?__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?%s\s*\(`,
		fn:    `extern "C" __device__ void %s(`,
		ids:   "uint3 sl_fm_tid, uint3 sl_fm_bid, dim3 sl_fm_bdim, dim3 sl_fm_gdim, ",
		macros: func(_, _ [3]int, _ int) string {
			return "#define threadIdx sl_fm_tid\n#define blockIdx sl_fm_bid\n#define blockDim sl_fm_bdim\n#define gridDim sl_fm_gdim\n"
		},
		undef: "#undef threadIdx\n#undef blockIdx\n#undef blockDim\n#undef gridDim\n",
		call: func(g, b [3]int) string {
			// l → global ids (x, y, z) → thread and block ids.
			x := fmt.Sprintf("(unsigned)(sl_fm_l %% %d)", g[0])
			y := fmt.Sprintf("(unsigned)(sl_fm_l / %d %% %d)", g[0], g[1])
			z := fmt.Sprintf("(unsigned)(sl_fm_l / %d)", g[0]*g[1])
			return fmt.Sprintf("make_uint3(%[1]s %% %[4]d, %[2]s %% %[5]d, %[3]s %% %[6]d), make_uint3(%[1]s / %[4]d, %[2]s / %[5]d, %[3]s / %[6]d), dim3(%[4]d, %[5]d, %[6]d), dim3(%[7]d, %[8]d, %[9]d)",
				x, y, z, b[0], b[1], b[2], g[0]/b[0], g[1]/b[1], g[2]/b[2])
		},
		cooperative: regexp.MustCompile(`\b(__syncthreads\w*|__syncwarp|__shared__|__shfl\w*|__ballot\w*|__any_sync|__all_sync|cooperative_groups)\b`),
		lit:         cuLiteral,
		localID:     "threadIdx.x", localSize: "blockDim.x",
	}
)

// source returns the model's kernel text in the language ("" when none).
func (l fmLang) source(m *Model) string {
	if l.kind == graph.ImplCUDA {
		return m.Kernel.CUDA
	}
	return m.Kernel.OpenCL
}

// file names the kernel's text in build messages: the kernel file, or the
// model's file for inline source.
func (l fmLang) file(m *Model) string {
	f := m.Kernel.OpenCLFile
	if l.kind == graph.ImplCUDA {
		f = m.Kernel.CUDAFile
	}
	if f != "" && m.file != "" {
		if r, err := relative(m.file, f); err == nil {
			return r
		}
	}
	if f != "" {
		return f
	}
	return m.source() + "." + string(l.kind)
}

// generate returns the FIRE actor source of the model's kernel src.
func (l fmLang) generate(m *Model, src string, params []Param, rg Range) (string, error) {
	if code := stripComments(src); true {
		if loc := l.cooperative.FindStringIndex(code); loc != nil {
			line := strings.Count(code[:loc[0]], "\n") + 1
			return "", fmt.Errorf("%s:%d: the %s kernel uses %s: a graph actor runs the model's work-items one after another, so kernels whose work-items cooperate (barriers, local or shared memory, group and local ids) are not graph actors",
				l.file(m), line, l.kind, strings.TrimSpace(code[loc[0]:loc[1]]))
		}
	}
	re := regexp.MustCompile(fmt.Sprintf(l.entry, regexp.QuoteMeta(m.Kernel.Entry)))
	locs := re.FindAllStringIndex(src, -1)
	if len(locs) != 1 {
		return "", fmt.Errorf("%s: expected one %s kernel named %q, found %d", l.file(m), l.kind, m.Kernel.Entry, len(locs))
	}
	loc := locs[0]
	head := fmt.Sprintf(l.fn, m.Kernel.Entry) + l.ids + strings.Repeat("\n", strings.Count(src[loc[0]:loc[1]], "\n"))
	if rest := strings.TrimSpace(src[loc[1]:]); strings.HasPrefix(rest, ")") || strings.HasPrefix(rest, "void)") {
		head = strings.TrimSuffix(head, ", ")
		if strings.HasPrefix(rest, "void)") {
			src = src[:loc[1]] + strings.Replace(src[loc[1]:], "void", "", 1)
		}
	}
	var g, b [3]int
	total := 1
	for i := range 3 {
		g[i], b[i] = 1, 1
		if i < len(rg.Global) {
			g[i] = rg.Global[i]
			total *= g[i]
		}
		switch {
		case i < len(rg.Local):
			b[i] = rg.Local[i]
		case i == 0 && len(rg.Local) == 0:
			b[i] = defaultBlock(g[0])
		}
	}
	var w strings.Builder
	w.WriteString(l.macros(g, b, len(rg.Global)))
	fmt.Fprintf(&w, "#line 1 %q\n", l.file(m))
	w.WriteString(src[:loc[0]] + head + src[loc[1]:])
	if !strings.HasSuffix(src, "\n") {
		w.WriteString("\n")
	}
	w.WriteString(l.undef)
	fmt.Fprintf(&w, "#line 1 %q\n", "flow-model "+m.Name+" actor")
	w.WriteString("void FIRE() {\n")
	var args []string
	for _, s := range m.streams() {
		_, in, _ := m.Stream(s.Name)
		if in {
			fmt.Fprintf(&w, "\tTOKEN_%s_t *sl_fm_%s = CAPTURE(PORT_%s);\n", strings.ToUpper(s.Name), s.Name, s.Name)
		} else {
			fmt.Fprintf(&w, "\tTOKEN_%s_t *sl_fm_%s = RESERVE(PORT_%s, 0);\n", strings.ToUpper(s.Name), s.Name, s.Name)
		}
		args = append(args, "sl_fm_"+s.Name)
	}
	for _, p := range params {
		args = append(args, l.lit(p))
	}
	fmt.Fprintf(&w, "\tfor (unsigned long sl_fm_l = %s; sl_fm_l < %dUL; sl_fm_l += %s)\n", l.localID, total, l.localSize)
	fmt.Fprintf(&w, "\t\t%s(%s, %s);\n}\n", m.Kernel.Entry, l.call(g, b), strings.Join(args, ", "))
	return w.String(), nil
}

// defaultBlock is the CUDA block size the flow-model runner's launches use
// when the model gives no local range (device/cuda: the largest of 256,
// 128, …, 1 dividing the global size).
func defaultBlock(n int) int {
	for _, c := range []int{256, 128, 64, 32, 16, 8, 4, 2, 1} {
		if n%c == 0 {
			return c
		}
	}
	return 1
}

// clLiteral spells a parameter as an OpenCL C constant of its exact value.
func clLiteral(p Param) string {
	switch p.Type {
	case "i32":
		return fmt.Sprintf("((int)%d)", int32(p.Value))
	case "u32":
		return fmt.Sprintf("((uint)%dU)", uint32(p.Value))
	case "i64":
		return fmt.Sprintf("((long)%dL)", int64(p.Value))
	case "u64":
		return fmt.Sprintf("((ulong)%dUL)", uint64(p.Value))
	case "f32":
		return fmt.Sprintf("as_float(0x%08xU)", math.Float32bits(float32(p.Value)))
	}
	return fmt.Sprintf("as_double(0x%016xUL)", math.Float64bits(p.Value))
}

// cuLiteral spells a parameter as a CUDA C++ constant of its exact value.
func cuLiteral(p Param) string {
	switch p.Type {
	case "i32":
		return fmt.Sprintf("((int)%d)", int32(p.Value))
	case "u32":
		return fmt.Sprintf("((unsigned int)%dU)", uint32(p.Value))
	case "i64":
		return fmt.Sprintf("((long long)%dLL)", int64(p.Value))
	case "u64":
		return fmt.Sprintf("((unsigned long long)%dULL)", uint64(p.Value))
	case "f32":
		return fmt.Sprintf("__int_as_float((int)0x%08xU)", math.Float32bits(float32(p.Value)))
	}
	return fmt.Sprintf("__longlong_as_double((long long)0x%016xULL)", math.Float64bits(p.Value))
}

// comment finds C comments.
var comment = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)

// stripComments blanks C comments out of src, keeping its lines.
func stripComments(src string) string {
	return comment.ReplaceAllStringFunc(src, func(c string) string {
		return strings.Repeat("\n", strings.Count(c, "\n"))
	})
}
