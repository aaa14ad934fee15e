package nexmark

// Kind says which of the three Nexmark records an Event carries.
type Kind uint8

// The event kinds.
const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

// Event is one record of the Nexmark stream: a new person, a new auction or
// a bid. A bid (nearly all events) is held by value so generating one does
// not allocate; the rare person and auction are pointers.
type Event struct {
	Kind    Kind     `msgpack:"k" json:"kind"`
	Person  *Person  `msgpack:"p,omitempty" json:"person,omitempty"`
	Auction *Auction `msgpack:"a,omitempty" json:"auction,omitempty"`
	Bid     Bid      `msgpack:"b" json:"bid"`
}

// Time is the event's event time (Unix ms).
func (e Event) Time() int64 {
	switch e.Kind {
	case KindPerson:
		return e.Person.DateTime
	case KindAuction:
		return e.Auction.DateTime
	default:
		return e.Bid.DateTime
	}
}

// Person is a new user of the auction site.
type Person struct {
	ID           int64  `msgpack:"id" json:"id"`
	Name         string `msgpack:"name" json:"name"`
	EmailAddress string `msgpack:"email" json:"emailAddress"`
	CreditCard   string `msgpack:"cc" json:"creditCard"`
	City         string `msgpack:"city" json:"city"`
	State        string `msgpack:"state" json:"state"`
	DateTime     int64  `msgpack:"t" json:"dateTime"` // Unix ms
	Extra        string `msgpack:"x" json:"extra"`
}

// Auction is an item put up for sale by a seller (a person's id) in a
// category, open from DateTime until Expires.
type Auction struct {
	ID          int64  `msgpack:"id" json:"id"`
	ItemName    string `msgpack:"item" json:"itemName"`
	Description string `msgpack:"desc" json:"description"`
	InitialBid  int64  `msgpack:"init" json:"initialBid"`
	Reserve     int64  `msgpack:"res" json:"reserve"`
	DateTime    int64  `msgpack:"t" json:"dateTime"`  // Unix ms
	Expires     int64  `msgpack:"exp" json:"expires"` // Unix ms
	Seller      int64  `msgpack:"seller" json:"seller"`
	Category    int64  `msgpack:"cat" json:"category"`
	Extra       string `msgpack:"x" json:"extra"`
}

// Bid is a bidder's (a person's id) offer of Price (cents) on an auction.
type Bid struct {
	Auction  int64  `msgpack:"auction" json:"auction"`
	Bidder   int64  `msgpack:"bidder" json:"bidder"`
	Price    int64  `msgpack:"price" json:"price"`
	Channel  string `msgpack:"ch" json:"channel"`
	URL      string `msgpack:"url" json:"url"`
	DateTime int64  `msgpack:"t" json:"dateTime"` // Unix ms
	Extra    string `msgpack:"x" json:"extra"`
}
