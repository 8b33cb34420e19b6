/**
 * Work after a commit, as a producer/consumer pair (svix carries its queue pair the same way, in
 * its app state): made once where the process starts, its producing side handed to the store,
 * which commits, and its consuming side to the delivery engine, which works. The store never
 * calls the engine: it puts what a commit produced, and reads the room the consumer declares;
 * until a consumer attaches (or after it detaches) there is no room and items go nowhere, which
 * is right, since the work is in the store for whoever pulls it.
 */

/** What a consumer takes, and what room it has for the next commit's work. */
export interface WorkConsumer<Item, Room> {
  readonly room: Room;
  take(item: Item): void;
}

/** The store's side: the room to plan a commit with, and where its landed work goes. */
export interface WorkProducer<Item, Room> {
  room(): Room | undefined;
  put(item: Item): void;
}

/** The engine's side: attaching to the producer, until the returned function detaches it. */
export interface WorkIntake<Item, Room> {
  attach(consumer: WorkConsumer<Item, Room>): () => void;
}

export interface WorkPair<Item, Room> {
  producer: WorkProducer<Item, Room>;
  intake: WorkIntake<Item, Room>;
}

export function workPair<Item, Room>(): WorkPair<Item, Room> {
  let consumer: WorkConsumer<Item, Room> | null = null;
  return {
    producer: {
      room: () => consumer?.room,
      put: (item) => consumer?.take(item),
    },
    intake: {
      attach(next) {
        consumer = next;
        return () => {
          if (consumer === next) consumer = null;
        };
      },
    },
  };
}
