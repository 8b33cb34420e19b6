// A Socket Mode app written with slack-go (Debian's golang-github-slack-go-slack-dev), a Slack
// client nobody here wrote: it connects with its app-level token, prints each event it is sent,
// answers /goship in the ack and posts in the channel through chat.postMessage.
// tests/slack_go_test.ts builds and runs it against the service.
package main

import (
	"fmt"
	"os"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

func main() {
	api := slack.New(
		os.Getenv("SLACK_BOT_TOKEN"),
		slack.OptionAppLevelToken(os.Getenv("SLACK_APP_TOKEN")),
		slack.OptionAPIURL(os.Getenv("SLACK_API_URL")),
	)
	client := socketmode.New(api)
	go handle(api, client)
	if err := client.Run(); err != nil {
		fmt.Println("stopped:", err)
		os.Exit(1)
	}
}

func handle(api *slack.Client, client *socketmode.Client) {
	for evt := range client.Events {
		switch evt.Type {
		case socketmode.EventTypeConnected:
			fmt.Println("connected")
		case socketmode.EventTypeEventsAPI:
			client.Ack(*evt.Request)
			event, ok := evt.Data.(slackevents.EventsAPIEvent)
			if !ok {
				continue
			}
			if m, ok := event.InnerEvent.Data.(*slackevents.MessageEvent); ok {
				fmt.Printf("message %s\n", m.Text)
			}
		case socketmode.EventTypeSlashCommand:
			cmd, ok := evt.Data.(slack.SlashCommand)
			if !ok {
				continue
			}
			client.Ack(*evt.Request, map[string]interface{}{"text": "Go ships " + cmd.Text})
			if _, _, err := api.PostMessage(cmd.ChannelID, slack.MsgOptionText("shipped "+cmd.Text+" from Go", false)); err != nil {
				fmt.Println("post failed:", err)
			}
		}
	}
}
