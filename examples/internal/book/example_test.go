package book_test

import (
	"fmt"
	"time"

	"github.com/towergo/tower/examples/internal/book"
)

// Times print in milliseconds, rounded to the nearest 10ms.
func ExampleSince() {
	fmt.Println(book.Since(time.Now().Add(-104 * time.Millisecond)))
	// Output: 100
}
