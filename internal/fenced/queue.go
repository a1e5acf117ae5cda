package fenced

// Queue is a FIFO of values that reuses its storage: after warm-up, Push
// and Pop do not allocate. The zero value is empty and ready.
type Queue[T any] struct {
	items []T // len(items) is a power of two, or 0
	first int // index of the oldest item
	n     int // number of items
}

// Len returns the number of items.
func (q *Queue[T]) Len() int { return q.n }

// Front returns the oldest item; q is not empty.
func (q *Queue[T]) Front() *T { return &q.items[q.first] }

// At returns the i-th oldest item; i < q.Len().
func (q *Queue[T]) At(i int) *T { return &q.items[(q.first+i)&(len(q.items)-1)] }

// Push adds v as the newest item.
func (q *Queue[T]) Push(v T) {
	if q.n == len(q.items) {
		grown := make([]T, max(8, 2*len(q.items)))
		for i := range q.n {
			grown[i] = q.items[(q.first+i)&(len(q.items)-1)]
		}
		q.items, q.first = grown, 0
	}
	q.items[(q.first+q.n)&(len(q.items)-1)] = v
	q.n++
}

// Pop removes and returns the oldest item; q is not empty.
func (q *Queue[T]) Pop() T {
	var zero T
	v := q.items[q.first]
	q.items[q.first] = zero
	q.first = (q.first + 1) & (len(q.items) - 1)
	q.n--
	return v
}

// Clear removes every item, keeping the storage.
func (q *Queue[T]) Clear() {
	clear(q.items)
	q.first, q.n = 0, 0
}
