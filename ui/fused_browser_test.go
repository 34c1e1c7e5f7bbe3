package ui

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// chainEnds gives, for the channels into and out of the fused chain, how
// far (px, drawing units) each arrow's end lies from the border of the
// box it reaches: [src.o->A.i's end to the chain's left border, D.o->sink.i's
// start to its right border].
const chainEnds = `(() => { const box = (sel) => document.querySelector(sel + " .box");
	const end = (ch, at) => { const p = document.querySelector('#graph g.edge[data-channel="' + ch + '"] path.line');
		return p.getPointAtLength(at === "end" ? p.getTotalLength() : 0); };
	const c = box("#graph g.chain"), x0 = +c.getAttribute("x"), x1 = x0 + +c.getAttribute("width");
	return [Math.abs(end("src.o->A.i", "end").x - x0), Math.abs(end("D.o->sink.i", "start").x - x1)] })()`

// TestFusedChainInBrowser shows a run that fused A..D (a run recorded as
// `sluice run --stats-json` does, shown as the last run): the chain is
// one box labelled "fused A..D (4)" in its actors' place, the channels
// into and out of it re-routed to its borders, those between its actors
// not drawn; its labels are 11 px or more. A click opens it: its four
// actors drawn in its frame, legible; a click on the frame folds it again.
// No console errors.
func TestFusedChainInBrowser(t *testing.T) {
	t.Parallel()
	stats, trace := recordRun(t, "testdata/fused-chain.yaml")
	saved, err := LoadSavedRun(stats, trace)
	if err != nil {
		t.Fatal(err)
	}
	if f := saved.Run.Actors[1].Fused; f != "fused(A..D)" {
		t.Fatalf("the recorded run: expected A in the fused chain fused(A..D), found %q", f)
	}
	ctx := browser(t)
	errs := consoleErrors(t, ctx)
	openGraph(t, ctx, &Server{File: "testdata/fused-chain.yaml", Saved: saved}, "src")
	eventually(t, "the chain folded", func() bool { return count(t, ctx, `#graph g.chain.folded[data-fused="fused(A..D)"]`) == 1 })
	if n, m := count(t, ctx, "#graph g.node"), count(t, ctx, "#graph g.chain"); n != 2 || m != 1 {
		t.Fatalf("folded: expected src, sink and one chain box drawn, found %d actor boxes and %d chain boxes", n, m)
	}
	if got := text(t, ctx, "#graph g.chain .name"); got != "fused A..D (4)" {
		t.Fatalf("folded: expected the box labelled %q, found %q", "fused A..D (4)", got)
	}
	if n := count(t, ctx, "#graph g.edge"); n != 2 || count(t, ctx, `#graph g.edge[data-channel="B.o->C.i"]`) != 0 {
		t.Fatalf("folded: expected the two channels to and from the chain drawn, not those inside it, found %d channels", n)
	}
	if d := eval[[]float64](t, ctx, chainEnds); d[0] > 1 || d[1] > 1 {
		t.Fatalf("folded: expected the channels to end on the chain box's borders, found them %.1f and %.1f px away", d[0], d[1])
	}
	if got := eval[[]float64](t, ctx, visibleLabels); got[0] < 11 || got[1] < 8 {
		t.Fatalf("folded: expected its labels shown at 11 px or more, found the smallest at %.2f px of %.0f", got[0], got[1])
	}
	if fig := text(t, ctx, "#graph g.chain .figure"); fig == "" {
		t.Fatal("folded: expected the run's figures on the chain's box, found none")
	}
	if k := text(t, ctx, "#legend"); !strings.Contains(k, "fused") {
		t.Fatalf("expected the legend to name the fused badge, found %q", k)
	}
	shot(t, ctx, "fused-folded")

	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.chain .name`)))
	eventually(t, "the chain opened", func() bool { return count(t, ctx, "#graph g.node") == 6 })
	inside := eval[int](t, ctx, `(() => { const f = document.querySelector('#graph g.cluster.fused[data-fused="fused(A..D)"] rect');
		if (!f) return -1;
		const r = f.getBoundingClientRect();
		return ["A", "B", "C", "D"].filter((a) => { const b = document.querySelector('#graph g.node[data-actor="' + a + '"] .box').getBoundingClientRect();
			return b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom; }).length })()`)
	if inside != 4 || count(t, ctx, "#graph g.chain") != 0 || count(t, ctx, `#graph g.edge[data-channel="B.o->C.i"]`) != 1 {
		t.Fatalf("opened: expected A, B, C and D drawn in the chain's frame (found %d; -1: no frame) and the channels between them", inside)
	}
	shot(t, ctx, "fused-open")
	if got := eval[[]float64](t, ctx, visibleLabels); got[0] < 11 || got[2] < 6 {
		t.Fatalf("opened: expected the actors' names and every label at 11 px or more, found the smallest at %.2f px of %.0f (%.0f names)", got[0], got[1], got[2])
	}

	steps(t, ctx, chromedp.Click(chromedp.CSS(`#graph g.cluster.fused > text`)))
	eventually(t, "the chain folded again", func() bool { return count(t, ctx, "#graph g.chain") == 1 && count(t, ctx, "#graph g.node") == 2 })
	noConsoleErrors(t, errs)
}
