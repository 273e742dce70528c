// Package queue is an unbounded first-in first-out queue on a ring buffer:
// pushing and popping never reallocate once the queue has grown to its
// working size, unlike a slice that is re-sliced from the front and
// appended to at the back. Models use it for their internal queues (flits
// waiting for a link, credits on their way back, packets waiting at a
// source); hardware FIFOs with a depth, signals and checks are rtl/fifo.
package queue

// Queue is a FIFO of T. The zero value is an empty queue.
type Queue[T any] struct {
	buf  []T
	head int
	n    int
}

// Len returns the number of items.
func (q *Queue[T]) Len() int { return q.n }

// Push appends v at the back.
func (q *Queue[T]) Push(v T) {
	if q.n == len(q.buf) {
		q.grow()
	}
	i := q.head + q.n
	if i >= len(q.buf) {
		i -= len(q.buf)
	}
	q.buf[i] = v
	q.n++
}

// PushFront puts v at the front: it is the next item Pop returns.
func (q *Queue[T]) PushFront(v T) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.head--
	if q.head < 0 {
		q.head += len(q.buf)
	}
	q.buf[q.head] = v
	q.n++
}

// Front returns a pointer to the front item; the queue must not be empty.
func (q *Queue[T]) Front() *T { return &q.buf[q.head] }

// At returns a pointer to item i (0 is the front); i must be in [0, Len).
func (q *Queue[T]) At(i int) *T {
	j := q.head + i
	if j >= len(q.buf) {
		j -= len(q.buf)
	}
	return &q.buf[j]
}

// Pop removes and returns the front item; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	var zero T
	v := q.buf[q.head]
	q.buf[q.head] = zero // drop references for the garbage collector
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	q.n--
	return v
}

// Discard removes the front item without copying it out; the queue must
// not be empty.
func (q *Queue[T]) Discard() {
	var zero T
	q.buf[q.head] = zero
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	q.n--
}

// Clear empties the queue, keeping its storage.
func (q *Queue[T]) Clear() {
	for q.n > 0 {
		q.Pop()
	}
	q.head = 0
}

func (q *Queue[T]) grow() {
	nb := make([]T, max(4, 2*len(q.buf)))
	for i := range q.n {
		nb[i] = *q.At(i)
	}
	q.buf, q.head = nb, 0
}
