package rendezvous

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Results: once its program has exited, and before it reports the exit, a launcher sends the AM
// what the program wrote to its result file (contract.EnvResultFile), in chunks that each fit a
// message, in order; the last chunk says so. A file over contract.MaxResultBytes is not sent: one
// message says its size instead (TooLarge). An AM whose Handler is no ResultHandler answers 404
// (ErrNotServed).

// ResultChunkBytes is the most one chunk carries: base64 in JSON, sealed, it stays under
// MaxBodyBytes.
const ResultChunkBytes = 40 << 10

// ResultChunk is one piece of a task's result.
type ResultChunk struct {
	Task        taskspec.TaskID
	ContainerID string
	Offset      int64  // where Data goes in the result
	Data        []byte // at most ResultChunkBytes
	Last        bool   // the result ends with this chunk (its size is Offset+len(Data))
	// TooLarge, when not 0, is the size of a result file over contract.MaxResultBytes, which is
	// not sent (Data empty, Last set).
	TooLarge int64
}

// ResultHandler is what a Handler implements to receive results.
type ResultHandler interface {
	SaveResult(ctx context.Context, c ResultChunk) error
}

type wireResult struct {
	Task        string `json:"task"`
	ContainerID string `json:"container_id,omitempty"`
	Offset      int64  `json:"offset"`
	Data        []byte `json:"data,omitempty"`
	Last        bool   `json:"last,omitempty"`
	TooLarge    int64  `json:"too_large,omitempty"`
}

func encodeResult(c ResultChunk) []byte {
	return mustJSON(wireResult{Task: c.Task.String(), ContainerID: c.ContainerID, Offset: c.Offset, Data: c.Data, Last: c.Last, TooLarge: c.TooLarge})
}

// DecodeResultChunk parses and validates a result chunk: its offset and size within
// contract.MaxResultBytes, a TooLarge size only over it and alone.
func DecodeResultChunk(body []byte) (ResultChunk, error) {
	var w wireResult
	if err := decodeJSON(body, &w); err != nil {
		return ResultChunk{}, fmt.Errorf("result: %w", err)
	}
	task, err := parseTask(w.Task)
	if err != nil {
		return ResultChunk{}, fmt.Errorf("result: %w", err)
	}
	if err := checkID("container id", w.ContainerID); err != nil {
		return ResultChunk{}, fmt.Errorf("result of %s: %w", task, err)
	}
	switch {
	case len(w.Data) > ResultChunkBytes:
		return ResultChunk{}, fmt.Errorf("result of %s: a chunk of %d bytes, at most %d", task, len(w.Data), ResultChunkBytes)
	case w.Offset < 0 || w.Offset+int64(len(w.Data)) > contract.MaxResultBytes:
		return ResultChunk{}, fmt.Errorf("result of %s: bytes %d to %d, beyond the %d a result may have", task, w.Offset, w.Offset+int64(len(w.Data)), contract.MaxResultBytes)
	case w.TooLarge != 0 && (w.TooLarge <= contract.MaxResultBytes || len(w.Data) > 0 || w.Offset != 0 || !w.Last):
		return ResultChunk{}, fmt.Errorf("result of %s: a too-large notice of %d bytes with data or within the limit", task, w.TooLarge)
	}
	return ResultChunk{Task: task, ContainerID: w.ContainerID, Offset: w.Offset, Data: w.Data, Last: w.Last, TooLarge: w.TooLarge}, nil
}

// SendResult sends a task's whole result (at most contract.MaxResultBytes) in chunks, or, for
// tooLarge > 0, the notice of a file of that size that is not sent. Bound ctx.
func (c *Client) SendResult(ctx context.Context, task taskspec.TaskID, containerID string, data []byte, tooLarge int64) error {
	if tooLarge > 0 {
		return c.sendResultChunk(ctx, ResultChunk{Task: task, ContainerID: containerID, Last: true, TooLarge: tooLarge})
	}
	for off := 0; ; off += ResultChunkBytes {
		end := min(off+ResultChunkBytes, len(data))
		ch := ResultChunk{Task: task, ContainerID: containerID, Offset: int64(off), Data: data[off:end], Last: end == len(data)}
		if err := c.sendResultChunk(ctx, ch); err != nil {
			return err
		}
		if ch.Last {
			return nil
		}
	}
}

func (c *Client) sendResultChunk(ctx context.Context, ch ResultChunk) error {
	if _, _, err := c.call(ctx, http.MethodPost, "result", nil, encodeResult(ch), 0); err != nil {
		return fmt.Errorf("rendezvous: sending the result of %s: %w", ch.Task, err)
	}
	return nil
}

func (s *Server) servesResults() bool {
	_, ok := s.h.(ResultHandler)
	return ok
}

func (s *Server) result(ctx context.Context, resp responder, container string, body []byte) {
	ch, err := DecodeResultChunk(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if !s.bound(resp, "result", ch.Task, ch.ContainerID, container) {
		return
	}
	if err := s.h.(ResultHandler).SaveResult(ctx, ch); err != nil {
		s.handlerFailed("result", ch.Task, err)
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}
