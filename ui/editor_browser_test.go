package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/spec"
)

// setField types v into the side panel's input sel and fires its change.
func setField(t *testing.T, ctx context.Context, sel, v string) {
	t.Helper()
	ok := eval[bool](t, ctx, `(() => { const i = document.querySelector(`+jsString(sel)+`); if (!i) return false;
		i.value = `+jsString(v)+`; i.dispatchEvent(new Event("change")); return true })()`)
	if !ok {
		t.Fatalf("side panel: expected an input %s, found none", sel)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	return eval[int](t, ctx, `document.querySelectorAll(`+jsString(sel)+`).length`)
}

func yamlText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `document.getElementById("yaml").value`)
}

// TestEditorInBrowser edits cd2dat on the drawing: C's input rate set in
// the side panel changes check's verdict and the YAML; an actor added and
// connected by two clicks (output port, input port) appears in both, and
// undo takes the channel and the actor away again, redo brings them back;
// the edit survives a save and a reload; Generate Go shows the program.
func TestEditorInBrowser(t *testing.T) {
	ctx := browser(t)
	file := tempExample(t)
	ts := httptest.NewServer((&Server{File: file, Token: "tok"}).Handler())
	defer ts.Close()
	steps(t, ctx, chromedp.Navigate(ts.URL+"/?token=tok"), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))

	// Select C on the drawing; its rate 3 → 4 in the side panel.
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.node[data-actor="C"] rect`)))
	eventually(t, "C's panel", func() bool { return text(t, ctx, "#panel h2") == "actor C" })
	setField(t, ctx, `#panel input[data-field="rate"][data-port="i"]`, "4")
	eventually(t, "A=98 after C's rate 3 → 4 on the drawing", func() bool { return strings.Contains(text(t, ctx, "#findings"), "A=98") })
	if y := yamlText(t, ctx); !strings.Contains(y, "i: {type: f32, rate: 4}") || !strings.Contains(y, "# resample 2/3: polyphase FIR") {
		t.Fatalf("the YAML after the edit: expected C's rate 4 and the comments kept, found\n%s", y)
	}
	steps(t, ctx, chromedp.Click(chromedp.CSS("#yamltoggle")))
	eventually(t, "the YAML panel open", func() bool { return count(t, ctx, "#editor-pane.collapsed") == 0 })
	time.Sleep(300 * time.Millisecond) // the drawing refits to the narrower pane
	shot(t, ctx, "edit-rate")
	steps(t, ctx, chromedp.Click(chromedp.CSS("#yamltoggle")))
	eventually(t, "the YAML panel closed", func() bool { return count(t, ctx, "#editor-pane.collapsed") == 1 })
	time.Sleep(300 * time.Millisecond)

	// Add G with one input and connect E.o → G.i by two clicks.
	// A click on the drawing's background clears the selection.
	eval[bool](t, ctx, `document.getElementById("graph").dispatchEvent(new MouseEvent("click", {bubbles: true}))`)
	eventually(t, "the palette", func() bool { return count(t, ctx, "#add-name") == 1 })
	steps(t, ctx, chromedp.SetValue(chromedp.CSS("#add-name"), "G"), chromedp.SetValue(chromedp.CSS("#add-in"), "i:f32:1"),
		chromedp.SetValue(chromedp.CSS("#add-cost"), "100ns"), chromedp.Click(chromedp.CSS("#add-actor")))
	eventually(t, "node G drawn, its input not connected", func() bool {
		return count(t, ctx, `#graph g.node[data-actor="G"]`) == 1 && text(t, ctx, "#verdict") == "invalid"
	})
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph circle.port[data-port="E.o"]`)))
	eventually(t, "E.o pending", func() bool { return count(t, ctx, `#graph circle.port.pending[data-port="E.o"]`) == 1 })
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph circle.port[data-port="G.i"]`)))
	eventually(t, "the channel E.o → G.i and the verdict valid", func() bool {
		return count(t, ctx, `#graph g.edge[data-from="E.o"][data-to="G.i"]`) == 1 && text(t, ctx, "#verdict") == "valid"
	})
	if f := text(t, ctx, "#findings"); !strings.Contains(f, "G=80") {
		t.Fatalf("G fed by E (16 firings × 5 tokens): expected G=80, found %q", f)
	}
	if y := yamlText(t, ctx); !strings.Contains(y, "{from: E.o, to: G.i}") || !strings.Contains(y, "G: {in: {i: {type: f32, rate: 1}}, cost: 100ns}") {
		t.Fatalf("the YAML after adding G: found\n%s", y)
	}
	shot(t, ctx, "editor")

	// Undo: the channel goes, then G; redo brings G back.
	steps(t, ctx, chromedp.Click(chromedp.CSS("#undo")))
	eventually(t, "the channel undone", func() bool {
		return count(t, ctx, `#graph g.edge[data-to="G.i"]`) == 0 && count(t, ctx, `#graph g.node[data-actor="G"]`) == 1
	})
	steps(t, ctx, chromedp.Click(chromedp.CSS("#undo")))
	eventually(t, "G undone", func() bool {
		return count(t, ctx, "#graph g.node") == 6 && text(t, ctx, "#verdict") == "valid"
	})
	if strings.Contains(yamlText(t, ctx), "G:") {
		t.Fatal("after undo: expected G gone from the YAML")
	}
	steps(t, ctx, chromedp.Click(chromedp.CSS("#redo")))
	eventually(t, "G redone", func() bool { return count(t, ctx, `#graph g.node[data-actor="G"]`) == 1 })
	// Connect by dragging from D.o to G.i this time (D gives 8 per firing).
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.node[data-actor="G"] rect`)))
	eventually(t, "G's panel", func() bool { return text(t, ctx, "#panel h2") == "actor G" })
	setField(t, ctx, `#panel input[data-field="rate"][data-port="i"]`, "8")
	eventually(t, "G's rate 8", func() bool { return strings.Contains(yamlText(t, ctx), "i: {type: f32, rate: 8}") })
	eval[bool](t, ctx, `(() => { const q = (s) => document.querySelector('#graph circle.port[data-port="' + s + '"]');
		q("D.o").dispatchEvent(new MouseEvent("mousedown", {bubbles: true}));
		q("G.i").dispatchEvent(new MouseEvent("mouseup", {bubbles: true})); return true })()`)
	eventually(t, "the channel D.o → G.i dragged", func() bool {
		return count(t, ctx, `#graph g.edge[data-from="D.o"][data-to="G.i"]`) == 1 && strings.Contains(text(t, ctx, "#findings"), "G=14")
	})
	steps(t, ctx, chromedp.Click(chromedp.CSS("#undo")), chromedp.Click(chromedp.CSS("#undo")), chromedp.Click(chromedp.CSS("#undo")))
	eventually(t, "G undone again", func() bool { return count(t, ctx, "#graph g.node") == 6 && text(t, ctx, "#verdict") == "valid" })

	// Delete a channel from the drawing: select it, press Delete.
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.edge[data-from="E.o"] text`)))
	eventually(t, "the channel's panel", func() bool { return strings.HasPrefix(text(t, ctx, "#panel h2"), "channel E.o->F.i") })
	setField(t, ctx, `#panel input[data-field="capacity"]`, "64")
	eventually(t, "capacity 64", func() bool { return strings.Contains(yamlText(t, ctx), "{from: E.o, to: F.i, capacity: 64}") })
	steps(t, ctx, chromedp.Click(chromedp.CSS("#delete-channel")))
	eventually(t, "E.o → F.i deleted", func() bool {
		return count(t, ctx, `#graph g.edge[data-from="E.o"]`) == 0 && text(t, ctx, "#verdict") == "invalid"
	})
	steps(t, ctx, chromedp.Click(chromedp.CSS("#undo")))
	eventually(t, "the deletion undone", func() bool { return count(t, ctx, `#graph g.edge[data-from="E.o"]`) == 1 })

	// Place C: two replicas on the CPU, shown on its box.
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.node[data-actor="C"] rect`)))
	eventually(t, "C's panel", func() bool { return text(t, ctx, "#panel h2") == "actor C" })
	setField(t, ctx, `#panel input[data-field="device"]`, "cpu")
	eventually(t, "C placed on the CPU", func() bool { return count(t, ctx, `#graph g.node[data-actor="C"][data-mapped="cpu"]`) == 1 })
	setField(t, ctx, `#panel input[data-field="replicas"]`, "2")
	// (Read in one step: each check's answer redraws the box.)
	eventually(t, "C ×2", func() bool {
		return strings.Contains(eval[string](t, ctx, `(document.querySelector('#graph g.node[data-actor="C"]') || {}).textContent || ""`), "cpu ×2")
	})

	// Save, reload: the drawing's edit is in the file.
	steps(t, ctx, chromedp.Click(chromedp.CSS("#save")))
	eventually(t, "saved", func() bool { return text(t, ctx, "#saved") == "saved" })
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "i: {type: f32, rate: 4}") {
		t.Fatalf("save: expected C's rate 4 in the file, found\n%s", got)
	}
	// Save the mapping: C's placement goes to FILE-map.yaml.
	steps(t, ctx, chromedp.Click(chromedp.CSS("#savemap")))
	eventually(t, "mapping saved", func() bool { return strings.HasPrefix(text(t, ctx, "#saved"), "mapping saved to ") })
	mapFile := strings.TrimSuffix(file, filepath.Ext(file)) + "-map.yaml"
	if m, err := spec.LoadMapping(mapFile); err != nil || m.Actors["C"] == nil || m.Actors["C"].Device != "cpu" || m.Actors["C"].Replicas != 2 {
		data, _ := os.ReadFile(mapFile)
		t.Fatalf("saved mapping: expected C on cpu ×2, found %v\n%s", err, data)
	}
	steps(t, ctx, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="F"]`)))
	eventually(t, "A=98 after the reload", func() bool { return strings.Contains(text(t, ctx, "#findings"), "A=98") })

	// Generate Go.
	steps(t, ctx, chromedp.Click(chromedp.CSS("#gengo")))
	eventually(t, "the Go program", func() bool { return strings.Contains(text(t, ctx, "#gocode"), `graph.New("cd2dat")`) })
	if g := text(t, ctx, "#gocode"); !strings.Contains(g, "runtime.Run(ctx, g,") || !strings.Contains(g, `a.AddPort("i", graph.In, graph.MustTokenType("f32"), graph.SDF(4), "")`) {
		t.Fatalf("Generate Go: expected the program with C's rate 4, found\n%s", g)
	}
	if href := eval[string](t, ctx, `document.getElementById("godownload").href`); !strings.HasPrefix(href, "blob:") {
		t.Fatalf("Generate Go: expected a download link, found %q", href)
	}
	shot(t, ctx, "gogen")
}

// TestCompositeInBrowser expands the composites of examples/fft-filter.yaml
// in place: a cluster box with the inner actors, the channels into and out
// of the composite re-routed to the inner ports; a click collapses it.
func TestCompositeInBrowser(t *testing.T) {
	ctx := browser(t)
	srv := &Server{File: "../examples/fft-filter.yaml"}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	steps(t, ctx, chromedp.Navigate(ts.URL+"/?token="+srv.Token), chromedp.WaitReady(chromedp.CSS(`#graph g.node[data-actor="rows"]`)))
	nodes, edges := count(t, ctx, "#graph g.node"), count(t, ctx, "#graph g.edge")
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph text[data-toggle="rows"]`)))
	eventually(t, "rows expanded", func() bool {
		return count(t, ctx, `#graph g.cluster[data-composite="rows"]`) == 1 && count(t, ctx, `#graph g.node[data-actor="rows"]`) == 0
	})
	for _, inner := range []string{"rows/reorder", "rows/fft", "rows/transpose"} {
		if count(t, ctx, `#graph g.node.inner[data-actor="`+inner+`"]`) != 1 {
			t.Fatalf("expanded rows: expected the inner actor %s drawn", inner)
		}
	}
	if n, e := count(t, ctx, "#graph g.node"), count(t, ctx, "#graph g.edge"); n != nodes+2 || e != edges+2 {
		t.Fatalf("expanded rows: expected %d nodes and %d channels (3 inner actors for 1, 2 inner channels), found %d and %d", nodes+2, edges+2, n, e)
	}
	// The channel load.z → rows.in now ends at rows/reorder's input port.
	ends := eval[bool](t, ctx, `(() => {
		const p = document.querySelector('#graph g.edge[data-to="rows.in"] path:not(.hit)').getAttribute("d").split(" L").pop().split(",").map(Number);
		const c = document.querySelector('#graph circle.port[data-port="rows/reorder.x"]');
		return Math.abs(p[0] - c.cx.baseVal.value) < 0.5 && Math.abs(p[1] - c.cy.baseVal.value) < 0.5 })()`)
	if !ends {
		t.Fatal("expanded rows: expected the channel into rows to end at rows/reorder.x")
	}
	steps(t, ctx, chromedp.Click(chromedp.CSS("#fit")), chromedp.Click(chromedp.CSS(`#graph text[data-toggle="irows"]`)))
	eventually(t, "irows expanded", func() bool { return count(t, ctx, `#graph g.node[data-actor="irows/ifft"]`) == 1 })
	shot(t, ctx, "composite")
	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.cluster[data-composite="rows"] text`)))
	eventually(t, "rows collapsed", func() bool { return count(t, ctx, `#graph g.node[data-actor="rows"]`) == 1 })
}
