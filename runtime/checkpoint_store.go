package runtime

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CheckpointStore keeps a run's completed checkpoints.
type CheckpointStore interface {
	// Save stores a completed checkpoint durably; a later Latest returns
	// it (or a newer one).
	Save(ctx context.Context, cp *Checkpoint) error
	// Latest returns the checkpoint with the highest ID, or nil and no
	// error when the store holds none.
	Latest(ctx context.Context) (*Checkpoint, error)
}

// EncodeCheckpoint returns the checkpoint's wire form (encoding/gob).
func EncodeCheckpoint(cp *Checkpoint) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(cp); err != nil {
		return nil, fmt.Errorf("encoding checkpoint %d: %w", cp.ID, err)
	}
	return b.Bytes(), nil
}

// DecodeCheckpoint reads a checkpoint written by EncodeCheckpoint.
func DecodeCheckpoint(data []byte) (*Checkpoint, error) {
	cp := &Checkpoint{}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(cp); err != nil {
		return nil, fmt.Errorf("decoding checkpoint (%d bytes): %w", len(data), err)
	}
	return cp, nil
}

// DirStore keeps checkpoints as files in a directory: checkpoint-ID.ckpt,
// each written to a temporary file, synced and renamed into place, so a
// process killed while saving leaves the previous checkpoint whole. It
// keeps the last Keep files (0 means 2).
type DirStore struct {
	Dir  string
	Keep int
}

const ckptPrefix, ckptSuffix = "checkpoint-", ".ckpt"

// Save writes cp into the directory (created if needed) and removes the
// oldest files past Keep.
func (s *DirStore) Save(_ context.Context, cp *Checkpoint) error {
	data, err := EncodeCheckpoint(cp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	name := filepath.Join(s.Dir, fmt.Sprintf("%s%012d%s", ckptPrefix, cp.ID, ckptSuffix))
	tmp, err := os.CreateTemp(s.Dir, ".checkpoint-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), name)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", name, werr)
	}
	if d, err := os.Open(s.Dir); err == nil {
		_ = d.Sync() // the rename itself is durable
		_ = d.Close()
	}
	ids, err := s.ids()
	if err != nil {
		return err
	}
	keep := s.Keep
	if keep <= 0 {
		keep = 2
	}
	for len(ids) > keep {
		_ = os.Remove(s.path(ids[0]))
		ids = ids[1:]
	}
	return nil
}

// Latest reads the newest checkpoint file; nil when the directory holds
// none (or does not exist).
func (s *DirStore) Latest(context.Context) (*Checkpoint, error) {
	ids, err := s.ids()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	name := s.path(ids[len(ids)-1])
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	cp, err := DecodeCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cp, nil
}

func (s *DirStore) path(id int64) string {
	return filepath.Join(s.Dir, fmt.Sprintf("%s%012d%s", ckptPrefix, id, ckptSuffix))
}

// ids returns the IDs of the checkpoint files, in increasing order.
func (s *DirStore) ids() ([]int64, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, ckptPrefix) || !strings.HasSuffix(n, ckptSuffix) {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(n, ckptPrefix), ckptSuffix), 10, 64)
		if err == nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}
