package nexmark

import "strconv"

// The value tables of the benchmark's generator.
var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}

	// personNames is every "first last" pair.
	personNames = func() []string {
		var out []string
		for _, f := range firstNames {
			for _, l := range lastNames {
				out = append(out, f+" "+l)
			}
		}
		return out
	}()

	// hotChannels get nine bids in ten, each with its URL.
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
	hotURLs     = []string{
		"https://www.nexmark.com/googl/item.htm?query=1",
		"https://www.nexmark.com/faceb/item.htm?query=1",
		"https://www.nexmark.com/baidu/item.htm?query=1",
		"https://www.nexmark.com/apple/item.htm?query=1",
	}
)

// numChannels is how many other channels the tenth bid comes from.
const numChannels = 10_000

// channelNames and channelURLs are the other channels, made once.
var channelNames, channelURLs = func() ([]string, []string) {
	names, urls := make([]string, numChannels), make([]string, numChannels)
	r := newRand(0x6e65786d61726b, 0)
	for i := range numChannels {
		names[i] = "channel-" + strconv.Itoa(i)
		urls[i] = "https://www.nexmark.com/" + exactText(&r, 5) + "/" + exactText(&r, 5) + "/" + exactText(&r, 5) + "/item.htm?query=1&channel_id=" + strconv.Itoa(i)
	}
	return names, urls
}()

// textPool is a fixed string of random letters that generated text is cut
// from.
var textPool = func() string {
	b := make([]byte, 4096)
	r := newRand(0x746578, 0)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	return string(b)
}()
