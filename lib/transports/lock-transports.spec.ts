import 'reflect-metadata';
import { Body, Controller, Get, Headers, Injectable, Param, Post, type ExecutionContext } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import type { TransportHandler } from './lock-transport.interface.js';
import { handlerSourcesOf, transportServing } from './lock-transports.js';
import { unservedTransportOf } from './unserved-handler.js';

@Controller('docs')
class DocsController {
  @Get(':id')
  read(@Param('id') id: string, @Headers('X-Tenant') tenant: string): string {
    return id + tenant;
  }

  @Post()
  create(@Body() body: unknown): unknown {
    return body;
  }
}

@Resolver()
class DocsResolver {
  @Query(() => String)
  doc(): string {
    return '';
  }

  @Mutation(() => String)
  save(): string {
    return '';
  }

  @ResolveField(() => String)
  title(): string {
    return '';
  }
}

@WebSocketGateway()
class DocsGateway {
  @SubscribeMessage('save')
  save(): void {}
}

@Controller()
class DocsMessages {
  @MessagePattern('save')
  save(): void {}

  @EventPattern('saved')
  saved(_event: unknown): void {}
}

@Processor('docs')
class DocsProcessor extends WorkerHost {
  async process(): Promise<void> {}

  other(): void {}
}

@Injectable()
class DocsService {
  save(): void {}
}

function handler(owner: { prototype: object }, methodName: string, modulePath?: string): TransportHandler {
  const method = (owner.prototype as Record<string, object>)[methodName];
  return { owner, methodName, method, modulePath };
}

function contextOf(type: string): ExecutionContext {
  return { getType: () => type } as unknown as ExecutionContext;
}

describe('the registered transports', () => {
  it("describe a route handler by its routes, under its module's RouterModule path, and by its parameter decorators", () => {
    expect(handlerSourcesOf(handler(DocsController, 'read', 'orgs/:org'))).toEqual({
      kind: 'an HTTP handler',
      sources: ['params', 'query', 'body', 'headers', 'user'],
      routes: ['/orgs/:org/docs/:id'],
      routeParams: new Set(['org', 'id']),
      someRouteParams: new Set(['org', 'id']),
      parameters: [
        { source: 'params', field: 'id' },
        { source: 'headers', field: 'x-tenant' },
      ],
    });
    expect(handlerSourcesOf(handler(DocsController, 'create'))?.parameters).toEqual([
      { source: 'body', field: undefined },
    ]);
  });

  it("give a resolver the headers and user of the context's request, a gateway handler its handshake's and socket's, and nothing else a request", () => {
    expect(handlerSourcesOf(handler(DocsResolver, 'save'))).toMatchObject({
      kind: 'a GraphQL resolver',
      sources: ['headers', 'user'],
      routes: [],
    });
    expect(handlerSourcesOf(handler(DocsGateway, 'save'))).toMatchObject({
      kind: 'a WebSocket message handler',
      sources: ['headers', 'query', 'user'],
    });
    expect(handlerSourcesOf(handler(DocsMessages, 'save'))).toBeUndefined();
    expect(handlerSourcesOf(handler(DocsProcessor, 'process'))).toBeUndefined();
    expect(handlerSourcesOf(handler(DocsService, 'save'))).toBeUndefined();
  });

  it('recognise every handler Nest may run with no LockInterceptor around it, and never a route or a plain method', () => {
    const transportOf = (owner: { prototype: object }, methodName: string) =>
      unservedTransportOf(handler(owner, methodName))?.type;
    expect(transportOf(DocsResolver, 'doc')).toBe('graphql');
    expect(transportOf(DocsResolver, 'title')).toBe('graphql');
    expect(transportOf(DocsGateway, 'save')).toBe('ws');
    expect(transportOf(DocsMessages, 'save')).toBe('rpc');
    expect(transportOf(DocsMessages, 'saved')).toBe('rpc');
    expect(transportOf(DocsProcessor, 'process')).toBe('queue');
    expect(transportOf(DocsProcessor, 'other')).toBeUndefined();
    expect(transportOf(DocsController, 'read')).toBeUndefined();
    expect(transportOf(DocsService, 'save')).toBeUndefined();
  });

  it("serve an intercepted call by its context's type, and leave a call of any other type alone", () => {
    for (const type of ['http', 'graphql', 'ws', 'rpc']) expect(transportServing(contextOf(type))?.type).toBe(type);
    expect(transportServing(contextOf('kafka-without-a-transport'))).toBeUndefined();
  });
});
