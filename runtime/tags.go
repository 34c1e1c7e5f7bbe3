package runtime

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sluicehq/sluice/graph"
)

// Tag is metadata attached to one token position of a stream.
type Tag struct {
	// Offset is the token's position: on Firing.Tags, relative to the
	// start of the input window; on Firing.AddTag, relative to the start of
	// the output window.
	Offset int
	// Key and Value are the metadata.
	Key   string
	Value any
}

// TagPolicy is an actor's tag propagation, from its "tags" attribute:
// "all" (the default: every input's tags go to every output), "one-to-one"
// (input i to output i) or "none".
type TagPolicy string

// Tag propagation policies.
const (
	TagsAll      TagPolicy = "all"
	TagsOneToOne TagPolicy = "one-to-one"
	TagsNone     TagPolicy = "none"
)

// tagStore holds the tags of one channel by absolute token position
// (initial tokens first).
type tagStore struct {
	mu   sync.Mutex
	tags []posTag
}

type posTag struct {
	pos int64
	tag Tag
}

func (s *tagStore) add(pos int64, t Tag) {
	s.mu.Lock()
	i := sort.Search(len(s.tags), func(i int) bool { return s.tags[i].pos > pos })
	s.tags = append(s.tags, posTag{})
	copy(s.tags[i+1:], s.tags[i:])
	s.tags[i] = posTag{pos, t}
	s.mu.Unlock()
}

// window returns the tags in [lo, hi), removing them when take is set.
func (s *tagStore) window(lo, hi int64, take bool) []posTag {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.tags), func(i int) bool { return s.tags[i].pos >= lo })
	j := sort.Search(len(s.tags), func(i int) bool { return s.tags[i].pos >= hi })
	out := append([]posTag(nil), s.tags[i:j]...)
	if take {
		s.tags = append(s.tags[:i], s.tags[j:]...)
	}
	return out
}

// actorTags are an actor's tag stores: one per input port, those of
// every channel of each output port, and its policy.
type actorTags struct {
	ins    []*tagStore
	outs   [][]*tagStore
	outIni [][]int64
	policy TagPolicy
}

type tagSet map[*graph.Actor]*actorTags

// newTags returns the stores of g's stream tags when on, or when some
// actor has a "tags" attribute; else nil (firings then look for no tag:
// see fireOnce).
func newTags(g *graph.Graph, on bool) (tagSet, error) {
	ts := tagSet{}
	for _, a := range g.Actors {
		p := TagPolicy(a.Attrs["tags"])
		switch p {
		case "":
			p = TagsAll
		case TagsAll, TagsOneToOne, TagsNone:
			on = true
		default:
			return nil, fmt.Errorf("runtime: actor %s: tags attribute %q: expected all, one-to-one or none", a.Name, p)
		}
		at := &actorTags{policy: p, ins: make([]*tagStore, len(a.Inputs)),
			outs: make([][]*tagStore, len(a.Outputs)), outIni: make([][]int64, len(a.Outputs))}
		ts[a] = at
	}
	if !on {
		return nil, nil
	}
	for _, c := range g.Channels {
		s := &tagStore{}
		if at := ts[c.To.Actor]; at != nil {
			for i, p := range c.To.Actor.Inputs {
				if p == c.To {
					at.ins[i] = s
				}
			}
		}
		if at := ts[c.From.Actor]; at != nil {
			for i, p := range c.From.Actor.Outputs {
				if p == c.From {
					at.outs[i] = append(at.outs[i], s)
					at.outIni[i] = append(at.outIni[i], int64(c.Initial))
				}
			}
		}
	}
	return ts, nil
}

func (f *Firing) tags() *actorTags {
	if f.run == nil || f.run.tags == nil {
		return nil
	}
	return f.run.tags[f.actor]
}

// Tags returns the tags on input i's window, offsets relative to its
// start, in position order. It is empty unless the run tracks tags
// (Options.Tags, or an actor with a "tags" attribute).
func (f *Firing) Tags(i int) []Tag {
	at := f.tags()
	if at == nil || at.ins[i] == nil {
		return nil
	}
	p := f.actor.Inputs[i]
	lo := p.Rate.TokensBefore(f.index)
	var out []Tag
	for _, t := range at.ins[i].window(lo, lo+int64(p.Rate.At(int(f.index))), false) {
		t.tag.Offset = int(t.pos - lo)
		out = append(out, t.tag)
	}
	return out
}

// AddTag attaches a tag to token offset of output i's window (on every
// channel the port feeds). It does nothing when the run does not track
// tags.
func (f *Firing) AddTag(i, offset int, key string, value any) {
	at := f.tags()
	if at == nil {
		return
	}
	lo := f.actor.Outputs[i].Rate.TokensBefore(f.index)
	for k, s := range at.outs[i] {
		s.add(at.outIni[i][k]+lo+int64(offset), Tag{Offset: offset, Key: key, Value: value})
	}
}

// propagateTags moves the tags of firing f's input windows to its output
// windows after it succeeded, by the actor's policy, scaling each offset
// by the ports' rates (offset·out/in: a decimator by 4 moves the tag at
// input offset 6 to output offset 1, an interpolator by 4 the tag at 1 to
// 4).
func propagateTags(f *Firing) {
	at := f.tags()
	if at == nil {
		return
	}
	for i, s := range at.ins {
		if s == nil {
			continue
		}
		p := f.actor.Inputs[i]
		lo := p.Rate.TokensBefore(f.index)
		rin := int64(p.Rate.At(int(f.index)))
		got := s.window(lo, lo+rin, true)
		if len(got) == 0 || at.policy == TagsNone {
			continue
		}
		for o := range at.outs {
			if at.policy == TagsOneToOne && o != i {
				continue
			}
			q := f.actor.Outputs[o]
			olo := q.Rate.TokensBefore(f.index)
			rout := int64(q.Rate.At(int(f.index)))
			if rout == 0 {
				continue
			}
			for _, t := range got {
				off := (t.pos - lo) * rout / max(rin, 1)
				for k, os := range at.outs[o] {
					tg := t.tag
					tg.Offset = int(off)
					os.add(at.outIni[o][k]+olo+off, tg)
				}
			}
		}
	}
}
