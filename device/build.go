package device

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PreludeName is the file name diagnostics inside a generated prelude get.
const PreludeName = "<prelude>"

// Diagnostic is one compiler message, located in the user's file.
type Diagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col,omitempty"`
	Severity string `json:"severity"` // "error", "warning", "note", "fatal error"
	Message  string `json:"message"`
}

// String renders "file:line:col: severity: message".
func (d Diagnostic) String() string {
	if d.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s: %s", d.File, d.Line, d.Col, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s:%d: %s: %s", d.File, d.Line, d.Severity, d.Message)
}

// BuildError is a kernel that did not compile: the device, the user's file,
// the diagnostics (mapped to the user's lines) and the full build log.
type BuildError struct {
	Device      Info
	File        string
	Diagnostics []Diagnostic
	Log         string
	Err         error
}

// Error renders the mapped diagnostics, or the raw build log.
func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "building %s for %s: ", e.File, e.Device)
	var errs []Diagnostic
	for _, d := range e.Diagnostics {
		if d.Severity == "error" || d.Severity == "fatal error" {
			errs = append(errs, d)
		}
	}
	switch {
	case len(errs) > 0:
		for i, d := range errs {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(d.String())
		}
	case strings.TrimSpace(e.Log) != "":
		b.WriteString(strings.TrimSpace(e.Log))
	default:
		fmt.Fprintf(&b, "%v (the compiler gave no log)", e.Err)
	}
	return b.String()
}

// Unwrap returns ErrBuild and the backend's error.
func (e *BuildError) Unwrap() []error { return []error{ErrBuild, e.Err} }

// Assemble joins a prelude and the user's source into one translation unit,
// with a #line directive so compilers that honour it (clang-based OpenCL
// compilers such as PoCL's, NVRTC) report the user's file and line. It
// returns the text and the number of lines before the user's first line.
func Assemble(src Source) (text string, preludeLines int) {
	if src.Prelude == "" && src.Name == "" {
		return src.Text, 0
	}
	var b strings.Builder
	if src.Prelude != "" {
		b.WriteString(src.Prelude)
		if !strings.HasSuffix(src.Prelude, "\n") {
			b.WriteString("\n")
		}
	}
	name := src.Name
	if name == "" {
		name = "kernel"
	}
	fmt.Fprintf(&b, "#line 1 %s\n", strconv.Quote(name))
	preludeLines = strings.Count(b.String(), "\n")
	b.WriteString(src.Text)
	return b.String(), preludeLines
}

// Compilers write "file:line:col: error: message" (clang, NVIDIA); PoCL
// writes "error: file:line:col: message".
var (
	diagRE    = regexp.MustCompile(`^(.*?):(\d+):(?:(\d+):)? ?(fatal error|error|warning|note|remark): ?(.*)$`)
	diagSevRE = regexp.MustCompile(`^(fatal error|error|warning|note|remark): (.*?):(\d+):(?:(\d+):)? ?(.*)$`)
)

// parseDiag returns file, line, col, severity, message of a log line.
func parseDiag(l string) (file string, line, col int, sev, msg string, ok bool) {
	if m := diagRE.FindStringSubmatch(l); m != nil {
		file, sev, msg = m[1], m[4], m[5]
		line, _ = strconv.Atoi(m[2])
		col, _ = strconv.Atoi(m[3])
	} else if m := diagSevRE.FindStringSubmatch(l); m != nil {
		file, sev, msg = m[2], m[1], m[5]
		line, _ = strconv.Atoi(m[3])
		col, _ = strconv.Atoi(m[4])
	} else {
		return "", 0, 0, "", "", false
	}
	if strings.ContainsAny(file, " \t") && !strings.HasPrefix(file, "<") {
		return "", 0, 0, "", "", false
	}
	return file, line, col, sev, msg, true
}

// MapLog rewrites a compiler log so every location points at the user's
// file and line, and parses its diagnostics. Locations the compiler already
// gives in file name (it honoured #line) are kept. Others — a compiler that
// ignored #line and counts from the top of the assembled text, calling it
// "<source>", "<kernel>", "input.cl" or a temporary path — are shifted back
// by preludeLines; those inside the prelude are reported as PreludeName.
func MapLog(log, name string, preludeLines int) (string, []Diagnostic) {
	if name == "" {
		name = "kernel"
	}
	var diags []Diagnostic
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		file, line, col, sev, msg, ok := parseDiag(l)
		if !ok {
			continue
		}
		if file != name && file != PreludeName {
			// The compiler did not honour #line (or reports the prelude).
			if line > preludeLines {
				file, line = name, line-preludeLines
			} else {
				file = PreludeName
			}
		}
		d := Diagnostic{File: file, Line: line, Col: col, Severity: sev, Message: msg}
		diags = append(diags, d)
		if col > 0 {
			lines[i] = fmt.Sprintf("%s:%d:%d: %s: %s", file, line, col, d.Severity, d.Message)
		} else {
			lines[i] = fmt.Sprintf("%s:%d: %s: %s", file, line, d.Severity, d.Message)
		}
	}
	return strings.Join(lines, "\n"), diags
}
