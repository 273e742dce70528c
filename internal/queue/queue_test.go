package queue_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/internal/queue"
)

func TestQueue(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/queue")
}

var _ = Describe("Queue", func() {
	It("is first in, first out across wrap-around and growth", func() {
		var q queue.Queue[int]
		next, want := 0, 0
		// Interleave pushes and pops so the ring wraps before it grows.
		for round := range 50 {
			for range round%7 + 1 {
				q.Push(next)
				next++
			}
			for range round % 5 {
				if q.Len() == 0 {
					break
				}
				Expect(*q.Front()).To(Equal(want))
				Expect(q.Pop()).To(Equal(want))
				want++
			}
			Expect(q.Len()).To(Equal(next - want))
			for i := range q.Len() {
				Expect(*q.At(i)).To(Equal(want + i))
			}
		}
		for q.Len() > 0 {
			Expect(q.Pop()).To(Equal(want))
			want++
		}
		Expect(want).To(Equal(next))
	})

	It("takes items at the front as well, across wrap-around and growth", func() {
		// A model of the queue as a plain slice, against pushes at either end.
		var q queue.Queue[int]
		var model []int
		for i := range 200 {
			switch {
			case i%3 == 0:
				q.PushFront(i)
				model = append([]int{i}, model...)
			case i%5 == 0 && q.Len() > 0:
				Expect(q.Pop()).To(Equal(model[0]))
				model = model[1:]
			default:
				q.Push(i)
				model = append(model, i)
			}
			Expect(q.Len()).To(Equal(len(model)))
			for k := range q.Len() {
				Expect(*q.At(k)).To(Equal(model[k]))
			}
		}
	})

	It("lets the front be changed in place and empties with Clear", func() {
		var q queue.Queue[[2]int]
		q.Push([2]int{1, 2})
		q.Push([2]int{3, 4})
		q.Front()[1] = 9
		Expect(q.Pop()).To(Equal([2]int{1, 9}))
		q.Clear()
		Expect(q.Len()).To(Equal(0))
		q.Push([2]int{5, 6})
		Expect(q.Pop()).To(Equal([2]int{5, 6}))
	})
})
